// then(f, fn): runs f, then the future fn(output of f) returns, and is that
// future's output. Two states, as the hand-written futures of tokio's "Async in depth" have:
// First (f and fn) and Second (the future fn made).
// Cancellation: destroying a Then destroys whichever future is running.
// Pipe form: `f | then(fn)`.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <utility>
#include <variant>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/future/map.hpp"

namespace pollux {

/// What then(f, fn) returns: runs f, then the future fn(output of f) returns, and is that future's
/// output.
template <Future F, class Fn>
requires Future<typename detail::MapResult<Fn, output_t<F>>::type>
class [[nodiscard("futures do nothing unless polled")]] Then {
  using Second = typename detail::MapResult<Fn, output_t<F>>::type;

 public:
  using Output = output_t<Second>;

  /// What then(f, fn) makes.
  Then(F future, Fn fn) : state_(std::in_place_index<kFirst>, First{std::move(fn), std::move(future)}) {}

  /// Polls the first future, then the future fn made from its output; Ready with that one's output.
  Poll<Output> poll(Context & cx) {
    if (state_.index() == kFirst) {
      First& first = std::get<kFirst>(state_);
      auto value = first.future.poll(cx);
      if (value.is_pending()) return pending;
      Fn fn = std::move(first.fn);
      // The second future is built before the first is destroyed, then moved
      // into place once: it has not been polled yet, so it may move (rule 4).
      state_.template emplace<kSecond>(detail::invoke_with_output(std::move(fn), std::move(value)));
    }
    POLLUX_CHECK_NOT_DONE(Then, state_.index() == kSecond);
    Poll<Output> result = std::get<kSecond>(state_).poll(cx);
    if (result.is_ready()) state_.template emplace<kDone>();
    return result;
  }

 private:
  struct First {  // fn first, so the future is destroyed before fn, as in Map
    Fn fn;
    F future;
  };
  static constexpr std::size_t kFirst = 0, kSecond = 1, kDone = 2;
  std::variant<First, Second, std::monostate> state_;
};

/// Runs `future`, then the future fn(output) returns; Ready with that one's output.
template <Future F, class Fn>
auto then(F future, Fn fn) {
  // The same checks, and messages, as the pipe form's.
  if constexpr (!detail::kTakesOutput<Fn, output_t<F>>) {
    static_assert(detail::kFalse<F>, "pollux: `then(f, fn)`: fn cannot take f's output (fn() for a future of void)");
    return detail::Misused{};
  } else if constexpr (!Future<typename detail::MapResult<Fn, output_t<F>>::type>) {
    static_assert(detail::kFalse<F>,
                  "pollux: `then(f, fn)`: fn must return a future; for a plain value, use map(f, fn)");
    return detail::Misused{};
  } else {
    return Then<F, Fn>(std::move(future), std::move(fn));
  }
}

/// What then(f, fn) returns: runs f, then the future fn(output of f) returns, and is that future's
/// output.
template <class Fn>
struct ThenAdaptor : PipeAdaptor {
  /// The function then(fn) was given.
  Fn fn;
};

/// The pipe form: `future | then(fn)`.
template <class Fn>
requires(!Future<Fn>) ThenAdaptor<Fn> then(Fn fn) { return {{}, std::move(fn)}; }

/// `future | then(fn)` is then(future, fn).
template <Future F, class Fn>
auto pipe_into(F future, ThenAdaptor<Fn> adaptor) {
  if constexpr (!detail::kTakesOutput<Fn, output_t<F>>) {
    static_assert(detail::kFalse<F>,
                  "pollux: `future | then(fn)`: fn cannot take the future's output (fn() for a future of void)");
    return detail::Misused{};
  } else if constexpr (!Future<typename detail::MapResult<Fn, output_t<F>>::type>) {
    static_assert(detail::kFalse<F>,
                  "pollux: `future | then(fn)`: fn must return a future; for a plain value, use map(fn)");
    return detail::Misused{};
  } else {
    return Then<F, Fn>(std::move(future), std::move(adaptor.fn));
  }
}

}  // namespace pollux
