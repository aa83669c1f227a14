// ready_future(v): a future that is Ready with v on its first poll;
/// A future of void that is Ready at its first poll.
// ready_future() is its void twin. Cancelling it drops v.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"

namespace pollux {

/// What ready_future(v) returns: a future that is Ready with v on its first poll;
template <class T>
class [[nodiscard("futures do nothing unless polled")]] ReadyFuture {
 public:
  using Output = T;

  /// What ready_future(value) makes.
  explicit ReadyFuture(T value) : value_(std::move(value)) {}

  /// Ready with the value at once, the first time it is polled.
  Poll<T> poll(Context&) {
    POLLUX_CHECK_NOT_DONE(ReadyFuture, value_.has_value());
    Poll<T> result(std::in_place, std::move(*value_));
    value_.reset();
    return result;
  }

 private:
  std::optional<T> value_;
};

/// What ready_future() returns: Ready at its first poll, with no value.
template <>
class [[nodiscard("futures do nothing unless polled")]] ReadyFuture<void> {
 public:
  using Output = void;

  /// Ready at once, the first time it is polled.
  Poll<void> poll(Context&) {
    POLLUX_CHECK_NOT_DONE(ReadyFuture, !done_);
    done_ = true;
    return ready();
  }

 private:
  bool done_ = false;
};

/// A future that is Ready with `value` at its first poll.
template <class T>
ReadyFuture<std::decay_t<T>> ready_future(T&& value) {
  return ReadyFuture<std::decay_t<T>>(std::forward<T>(value));
}

/// A future of void that is Ready at its first poll.
inline ReadyFuture<void> ready_future() { return {}; }

}  // namespace pollux
