// The slow path of the debug contract checks: name the type, stop.
#include "pollux/core/detail/contract.hpp"

#include <cstdio>
#include <cstdlib>

namespace pollux::detail {

void contract_violation(std::string_view type, const char* what) noexcept {
  std::fprintf(stderr, "pollux: contract violation: %.*s %s\n", static_cast<int>(type.size()), type.data(), what);
  std::fflush(stderr);
  std::abort();
}

void contract_violation_text(const char* text) noexcept {
  std::fprintf(stderr, "pollux: contract violation: %s\n", text);
  std::fflush(stderr);
  std::abort();
}

}  // namespace pollux::detail
