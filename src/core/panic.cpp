// The hosted panic handler: what a build without exceptions calls where
// the library would throw (pollux/core/panic.hpp). The hosted library
// throws instead, so only a user's own call reaches it here.
#include "pollux/core/panic.hpp"

#include "pollux/core/detail/concurrency.hpp"

#include <cstdio>
#include <cstdlib>

namespace pollux {
namespace {

void default_panic(const char* message) noexcept {
  std::fprintf(stderr, "pollux: panic: %s\n", message);
  std::fflush(stderr);
  std::abort();
}

detail::Atomic<PanicHandler> handler{&default_panic};

}  // namespace

PanicHandler set_panic_handler(PanicHandler next) noexcept {
  return handler.exchange(next != nullptr ? next : &default_panic);
}

void panic(const char* message) noexcept {
  handler.load()(message);
  std::abort();  // a handler that returned
}

}  // namespace pollux
