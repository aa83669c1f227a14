// The Future concept: a type with `Output` and `Poll<Output> poll(Context&)`.
// Every future, combinator and executor in pollux keeps these rules:
//  1. poll does what it can without blocking and returns at once.
//  2. Pending obliges the future to arrange that the waker of the most
//     recent poll is woken when progress is possible.
//  3. A future is never polled again after it returned Ready (debug builds
//     stop with the future's type, see core/detail/contract.hpp).
//  4. A future may be moved before its first poll, never after.
//  5. Destroying a future cancels it: every registration it made is removed.
//  6. Wakers may be cloned, woken and dropped from any thread, at any time.
//  7. An exception thrown by poll propagates to whoever polled; the future
//     may then only be destroyed.
//  8. Misuse gets a clear message (an exception or a contract violation),
//     never undefined behaviour: a timer or socket polled outside any
//     runtime throws NoRuntime, an awaited cancelled task gives Cancelled.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <type_traits>

#include "pollux/core/context.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/poll.hpp"

namespace pollux {

template <class F>
concept Future = std::is_object_v<F> && requires(F& f, Context& cx) {
  typename F::Output;
  { f.poll(cx) } -> std::same_as<Poll<typename F::Output>>;
};

/// The type a future is Ready with.
template <Future F>
using output_t = typename F::Output;

/// Polls `f` and reports a void output as Unit, so combinators that gather
/// values (join, select) treat every child alike.
template <Future F>
Poll<unit_if_void_t<output_t<F>>> poll_unit(F& f, Context& cx) {
  if constexpr (std::is_void_v<output_t<F>>) {
    if (f.poll(cx).is_pending()) return pending;
    return ready(Unit{});
  } else {
    return f.poll(cx);
  }
}

/// Rule 3's stop, for the state a hand-written poll is in once it returned
/// Ready: prints "pollux: contract violation: <F> polled again after it
/// returned Ready (contract rule 3)" and aborts, in every build. (The
/// POLLUX_CHECK_NOT_DONE macro checks the same in debug builds only.)
template <class F>
[[noreturn]] void polled_after_ready() noexcept {
  detail::polled_after_ready<F>();
}

}  // namespace pollux
