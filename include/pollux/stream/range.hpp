// range(first, last): the numbers first, first + 1, ..., last - 1 as a
// stream, always ready (futures-rs's stream::iter(first..last)). It does
// what iter(std::views::iota(first, last)) does, also with compilers whose
// <ranges> cannot build iota_view (Clang 14 with libstdc++ 12). Spends no
// coop budget (as iter). Cancellation: the numbers not yet yielded are
// simply not counted.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <optional>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream range(first, last) returns.
template <std::integral T>
class [[nodiscard("streams do nothing unless polled")]] Range {
 public:
  using Item = T;

  /// What range() makes; call that instead.
  Range(T first, T last) noexcept : next_(first), last_(last) {}

  /// The next number of the range, at once; the end at its bound.
  Poll<std::optional<Item>> poll_next(Context&) noexcept {
    if (next_ >= last_) return stream_end;
    return ready(next_++);
  }

 private:
  T next_;
  T last_;
};

}  // namespace stream

/// The integers from `first` up to `last`, excluding `last` (empty when
/// last <= first).
template <std::integral T>
stream::Range<T> range(T first, T last) noexcept {
  return stream::Range<T>(first, last);
}

}  // namespace pollux
