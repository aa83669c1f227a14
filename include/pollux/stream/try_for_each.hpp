// try_for_each(stream, fn): like for_each, but fn(item) returns a
// Result<void, E>, or a future of one, and the first error ends the loop:
// the future is Ready with it, and no further item is taken (futures-rs's
// try_for_each). Ready with success when the stream ended. A loop that has
// reasons to stop (a client that quit, an idle timeout) reads naturally:
// each step says whether to go on. Pipe form: `s | try_for_each(fn)`.
// Sequential: while a step's future waits, no item is taken, so in an
// event loop over merge_variant one slow step (a write to a peer that does
// not read) holds back every other event, the idle timer and the shutdown
// signal included. Keep steps short: feed a bounded channel read by a
// writer future (mpsc::PollSender and send_all), or spawn the slow work.
// Cancellation: destroying it destroys the running step, if any.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/stream/stream.hpp"
#include "pollux/core/result.hpp"

namespace pollux {

namespace detail {
template <class R>
struct VoidResultError;
template <class E>
struct VoidResultError<Result<void, E>> {
  using type = E;
};

template <class Step>
struct StepResult {
  using type = Step;
};
template <Future Step>
struct StepResult<Step> {
  using type = output_t<Step>;
};
}  // namespace detail

namespace stream {

/// The future try_for_each(s, fn) returns.
template <Stream S, class Fn>
class [[nodiscard("futures do nothing unless polled")]] TryForEach {
  using Step = std::invoke_result_t<Fn&, item_t<S>&&>;
  static constexpr bool kAsync = Future<Step>;
  using StepOutput = typename detail::StepResult<Step>::type;
  struct NoStep {};

 public:
  using Output = StepOutput;  // Result<void, E>

  /// What try_for_each() makes; call that instead.
  TryForEach(S source, Fn fn) : source_(std::move(source)), fn_(std::move(fn)) {}

  /// Calls fn on each item (awaiting its future, if it returns one); Ready with the first error,
  /// or with success at the end.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(TryForEach, !done_);
    for (;;) {
      if constexpr (kAsync) {
        if (step_) {
          auto result = step_->poll(cx);
          if (result.is_pending()) return pending;
          step_.reset();
          if (!result.value()) return finish(std::move(result).value());
        }
      }
      auto item = source_.poll_next(cx);
      if (item.is_pending()) return pending;
      if (!item.value()) return finish(Output());
      if constexpr (kAsync) {
        step_.emplace(std::invoke(fn_, std::move(*item.value())));
      } else {
        Output result = std::invoke(fn_, std::move(*item.value()));
        if (!result) return finish(std::move(result));
      }
    }
  }

 private:
  Poll<Output> finish(Output result) {
    done_ = true;
    return Poll<Output>(std::in_place, std::move(result));
  }

  S source_;
  Fn fn_;
  [[no_unique_address]] std::conditional_t<kAsync, std::optional<Step>, NoStep> step_;
  bool done_ = false;
};

}  // namespace stream

/// Calls `fn(item)` for each item of `source` until it returns an error.
template <Stream S, class Fn>
requires std::invocable<Fn&, item_t<S> &&> stream::TryForEach<S, Fn> try_for_each(S source, Fn fn) {
  return stream::TryForEach<S, Fn>(std::move(source), std::move(fn));
}

/// `s | try_for_each(fn)`.
template <class Fn>
auto try_for_each(Fn fn) {
  return stream_pipe([fn = std::move(fn)]<Stream S>(S source) mutable {
    if constexpr (std::invocable<Fn&, item_t<S>&&>) {
      return try_for_each(std::move(source), std::move(fn));
    } else {
      static_assert(
          detail::kFalse<S>,
          "pollux: `stream | try_for_each(fn)`: fn cannot take the stream's items "
          "(a merge_variant's item is a std::variant of every source's item: take the variant and std::visit it)");
      return detail::Misused{};
    }
  });
}

}  // namespace pollux
