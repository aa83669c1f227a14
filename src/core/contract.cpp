// The slow path of the debug contract checks: name the type, stop.
#include "pollux/core/detail/contract.hpp"

#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace pollux::detail {

std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 ? std::string(name.get()) : std::string(type.name());
}

void contract_violation(const std::type_info& type, const char* what) noexcept {
  contract_violation_text((type_name(type) + " " + what).c_str());
}

void contract_violation_text(const char* text) noexcept {
  std::fprintf(stderr, "pollux: contract violation: %s\n", text);
  std::fflush(stderr);
  std::abort();
}

}  // namespace pollux::detail
