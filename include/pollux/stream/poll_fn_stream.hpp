// poll_fn_stream<T>(fn): a stream whose poll_next is fn(Context&), which
// returns Poll<std::optional<T>>: the quickest way to write a small leaf
// stream. fn keeps the contract of poll_next (rule 2: Pending stores the
// waker of the context it was given). Cancellation: whatever fn keeps.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream poll_fn_stream<T>(fn) returns.
template <class T, class Fn>
class [[nodiscard("streams do nothing unless polled")]] PollFn {
 public:
  using Item = T;

  /// What poll_fn_stream() makes; call that instead.
  explicit PollFn(Fn fn) : fn_(std::move(fn)) {}

  /// Calls fn(cx): its answer is this poll's answer.
  Poll<std::optional<Item>> poll_next(Context & cx) { return fn_(cx); }

 private:
  Fn fn_;
};

}  // namespace stream

/// A stream of T whose poll_next calls `fn(cx)`.
template <class T, class Fn>
requires std::convertible_to<std::invoke_result_t<Fn&, Context&>, Poll<std::optional<T>>> stream::PollFn<T, Fn>
poll_fn_stream(Fn fn) {
  return stream::PollFn<T, Fn>(std::move(fn));
}

}  // namespace pollux
