// try_join(fs...): runs fallible futures concurrently, and is Ready with
// all their values, or with the first failure as soon as one fails, the
// others then destroyed at once (cancelled, rule 5). A fallible future's
// output is a Result<T, E> (then try_join gives Result<std::tuple<T...>, E>,
// every child with the same E) or a std::optional<T> (then it gives
// std::optional<std::tuple<T...>>, nullopt being the failure). A void
// value is Unit in the tuple. Like join, each poll polls the children that
// still run through the caller's waker.
// Cancellation: destroying it destroys every child and the values so far.
// An exception from a child propagates (rule 7), as in join.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <tuple>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/maybe_done.hpp"
#include "pollux/future/detail/try_output.hpp"

namespace pollux {

/// What try_join(fs...) returns: runs fallible futures concurrently, and is Ready with all their
/// values, or with the first failure as soon as one fails, the others then destroyed at once
/// (cancelled, rule 5).
template <Future... Fs>
requires(sizeof...(Fs) > 0
         && detail::SameFailure<output_t<Fs>...>) class [[nodiscard("futures do nothing unless polled")]] TryJoin {
  using First = detail::TryOutput<output_t<std::tuple_element_t<0, std::tuple<Fs...>>>>;
  using Values = std::tuple<typename detail::TryOutput<output_t<Fs>>::Value...>;

 public:
  using Output = typename First::template Whole<Values>;

  /// What try_join(fs...) makes.
  explicit TryJoin(Fs... futures) : children_(std::in_place, MaybeDone<Fs>(std::move(futures))...) {}

  /// Polls each child not yet done; Ready with every value once all succeeded, or with the first
  /// error as soon as one fails.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(TryJoin, children_.has_value());
    std::optional<Output> failure;
    bool all_done = true;
    std::apply([&](auto&... child) { ((all_done &= poll_child(child, cx, failure)), ...); }, *children_);
    if (failure) {
      children_.reset();  // the others are cancelled now
      return Poll<Output>(std::in_place, std::move(*failure));
    }
    if (!all_done) return pending;
    Output out = std::apply(
        [](auto&... child) {
          return Output(Values(detail::TryOutput<std::decay_t<decltype(child.take())>>::value(child.take())...));
        },
        *children_);
    children_.reset();
    return Poll<Output>(std::in_place, std::move(out));
  }

 private:
  // Polls one child unless a failure was found already; true when its value
  // is in. A failed child's output is taken into `failure`.
  template <class Child>
  static bool poll_child(Child & child, Context & cx, std::optional<Output> & failure) {
    if (failure) return false;
    if (!child.poll(cx)) return false;
    using T = detail::TryOutput<typename Child::Value>;
    if (!T::failed(child.peek())) return true;
    failure.emplace(First::template fail<Values>(T::failure(child.take())));
    return false;
  }

  std::optional<std::tuple<MaybeDone<Fs>...>> children_;  // empty once Ready
};

/// Runs `futures` concurrently until all succeeded or one failed.
template <Future... Fs>
requires(sizeof...(Fs) > 0 && detail::SameFailure<output_t<Fs>...>) TryJoin<Fs...> try_join(Fs... futures) {
  return TryJoin<Fs...>(std::move(futures)...);
}

}  // namespace pollux
