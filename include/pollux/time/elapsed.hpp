// Elapsed: the error of everything that waits with a deadline: timeout(d, f)
// and timeout_at(t, f) on a future, timeout(d) on a stream's items. A
// Result<T, Elapsed> holds the value or says that time ran out first.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

namespace pollux {

/// Time ran out before the value came.
struct Elapsed {
  /// A message for logs: "deadline has elapsed".
  static constexpr const char* what() noexcept { return "deadline has elapsed"; }
  /// All Elapsed are equal.
  friend bool operator==(Elapsed, Elapsed) noexcept = default;
};

}  // namespace pollux
