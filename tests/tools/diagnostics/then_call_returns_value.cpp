// expect: then\(f, fn\)`: fn must return a future
// The call form then(f, fn) with a fn that returns a plain value: told as
// the pipe form is.
#include <pollux/pollux.hpp>

int main() {
  auto f = pollux::then(pollux::ready_future(20), [](int n) { return n + 1; });
  return pollux::block_on(std::move(f));
}
