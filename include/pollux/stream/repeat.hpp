// repeat(v): an endless stream of copies of v, always ready. Bound it with
// take(n) or take_while. Spends no coop budget (as iter). Cancellation:
// nothing is lost.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream repeat(v) returns.
template <class T>
class [[nodiscard("streams do nothing unless polled")]] Repeat {
 public:
  using Item = T;

  /// What repeat() makes; call that instead.
  explicit Repeat(T value) : value_(std::move(value)) {}

  /// A copy of the value, at once; never the end.
  Poll<std::optional<Item>> poll_next(Context&) { return ready(value_); }

 private:
  T value_;
};

}  // namespace stream

/// An endless stream of copies of `value`.
template <class T>
stream::Repeat<T> repeat(T value) {
  return stream::Repeat<T>(std::move(value));
}

}  // namespace pollux
