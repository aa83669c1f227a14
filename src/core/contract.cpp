// The slow path of the debug contract checks: name the type, stop.
#include "pollux/core/contract.hpp"

#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace pollux::detail {

void contract_violation(const std::type_info& type, const char* what) noexcept {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  std::fprintf(stderr, "pollux: contract violation: %s %s\n", status == 0 ? name.get() : type.name(), what);
  std::fflush(stderr);
  std::abort();
}

}  // namespace pollux::detail
