// for_each(stream, fn): a future that calls fn(item) for every item and is
// Ready when the stream ended. fn may return a future, which is awaited
// before the next item is taken (for several at once, for_each_concurrent).
// Pipe form: `s | for_each(fn)`.
// Sequential: while a step's future waits, no item is taken, so in an
// event loop over merge_variant one slow step (a write to a peer that does
// not read) holds back every other event, the idle timer and the shutdown
// signal included. Keep steps short: feed a bounded channel read by a
// writer future (mpsc::PollSender and send_all), or spawn the slow work.
// Cancellation: destroying it destroys the running future of fn, if any.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The future for_each(s, fn) returns.
template <Stream S, class Fn>
class [[nodiscard("futures do nothing unless polled")]] ForEach {
  using Step = std::invoke_result_t<Fn&, item_t<S>&&>;
  static constexpr bool kAsync = Future<Step>;
  struct NoStep {};

 public:
  using Output = void;

  /// What for_each() makes; call that instead.
  ForEach(S source, Fn fn) : source_(std::move(source)), fn_(std::move(fn)) {}

  /// Calls fn on each item (awaiting its future, if it returns one); Ready at the end.
  Poll<void> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(ForEach, !done_);
    for (;;) {
      if constexpr (kAsync) {
        if (step_) {
          if (step_->poll(cx).is_pending()) return pending;
          step_.reset();
        }
      }
      auto item = source_.poll_next(cx);
      if (item.is_pending()) return pending;
      if (!item.value()) {
        done_ = true;
        return ready();
      }
      if constexpr (kAsync) {
        step_.emplace(std::invoke(fn_, std::move(*item.value())));
      } else {
        std::invoke(fn_, std::move(*item.value()));
      }
    }
  }

 private:
  S source_;
  Fn fn_;
  [[no_unique_address]] std::conditional_t<kAsync, std::optional<Step>, NoStep> step_;
  bool done_ = false;
};

}  // namespace stream

/// Calls `fn(item)` for each item of `source`.
template <Stream S, class Fn>
requires std::invocable<Fn&, item_t<S> &&> stream::ForEach<S, Fn> for_each(S source, Fn fn) {
  return stream::ForEach<S, Fn>(std::move(source), std::move(fn));
}

/// `s | for_each(fn)`.
template <class Fn>
auto for_each(Fn fn) {
  return stream_pipe([fn = std::move(fn)]<Stream S>(S source) mutable {
    if constexpr (std::invocable<Fn&, item_t<S>&&>) {
      return for_each(std::move(source), std::move(fn));
    } else {
      static_assert(
          detail::kFalse<S>,
          "pollux: `stream | for_each(fn)`: fn cannot take the stream's items "
          "(a merge_variant's item is a std::variant of every source's item: take the variant and std::visit it)");
      return detail::Misused{};
    }
  });
}

}  // namespace pollux
