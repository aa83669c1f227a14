// poll_fn(fn): a future whose poll is fn(Context&) -> Poll<T>. The quickest
// way to write a leaf or a loop by hand; fn keeps the rules itself (it must
// store the waker when it returns Pending). poll_fn<T>(fn) converts fn's
// answer to Poll<T>, for lambdas that return `pending` and `ready(...)`.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <type_traits>
#include <utility>

#include "pollux/core/future.hpp"

namespace pollux {

namespace detail {
template <class P>
struct PollValue;
template <class T>
struct PollValue<Poll<T>> {
  using type = T;
};
struct DeduceOutput {};
}  // namespace detail

/// What poll_fn(fn) returns: a future whose poll is fn(Context&) -> Poll<T>.
template <class T, class Fn>
class [[nodiscard("futures do nothing unless polled")]] PollFn {
 public:
  using Output = T;

  /// What poll_fn(fn) makes.
  explicit PollFn(Fn fn) : fn_(std::move(fn)) {}

  /// Calls fn(cx): its answer is this poll's answer.
  Poll<T> poll(Context & cx) { return fn_(cx); }

 private:
  Fn fn_;
};

/// A future whose poll is fn(cx); fn must keep rule 2.
template <class T = detail::DeduceOutput, class Fn>
auto poll_fn(Fn fn) {
  if constexpr (std::is_same_v<T, detail::DeduceOutput>) {
    using P = std::invoke_result_t<Fn&, Context&>;
    return PollFn<typename detail::PollValue<P>::type, Fn>(std::move(fn));
  } else {
    return PollFn<T, Fn>(std::move(fn));
  }
}

}  // namespace pollux
