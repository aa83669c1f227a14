// fold(stream, init, fn): a future of the accumulator after every item:
// acc = fn(std::move(acc), item). fn may also return a future of the new
// accumulator, which is awaited before the next item is taken. Pipe form:
// `s | fold(init, fn)`. Over an always-ready source the loop compiles to
// the loop one would write by hand.
// Cancellation: destroying it loses the accumulator.
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

/// The future fold(s, init, fn) returns.
template <Stream S, class Acc, class Fn>
class [[nodiscard("futures do nothing unless polled")]] Fold {
  using Step = std::invoke_result_t<Fn&, Acc&&, item_t<S>&&>;
  static constexpr bool kAsync = Future<Step>;
  struct NoStep {};

 public:
  using Output = Acc;

  /// What fold() makes; call that instead.
  Fold(S source, Acc init, Fn fn) : source_(std::move(source)), acc_(std::move(init)), fn_(std::move(fn)) {}

  /// Folds each item into the accumulator; Ready with it at the end of the stream.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Fold, acc_.has_value() || stepping());
    for (;;) {
      if constexpr (kAsync) {
        if (step_) {
          auto acc = step_->poll(cx);
          if (acc.is_pending()) return pending;
          step_.reset();
          acc_.emplace(std::move(acc).value());
        }
      }
      auto item = source_.poll_next(cx);
      if (item.is_pending()) return pending;
      if (!item.value()) {
        Acc out = std::move(*acc_);
        acc_.reset();
        return ready(std::move(out));
      }
      if constexpr (kAsync) {
        step_.emplace(std::invoke(fn_, std::move(*acc_), std::move(*item.value())));
        acc_.reset();
      } else {
        *acc_ = std::invoke(fn_, std::move(*acc_), std::move(*item.value()));
      }
    }
  }

 private:
  bool stepping() const noexcept {
    if constexpr (kAsync) return step_.has_value();
    return false;
  }

  S source_;
  std::optional<Acc> acc_;  // empty while a step runs, and once done
  Fn fn_;
  [[no_unique_address]] std::conditional_t<kAsync, std::optional<Step>, NoStep> step_;
};

}  // namespace stream

/// The fold of `source` from `init` by `fn`.
template <Stream S, class Acc, class Fn>
requires std::invocable<Fn&, Acc&&, item_t<S> &&> stream::Fold<S, Acc, Fn> fold(S source, Acc init, Fn fn) {
  return stream::Fold<S, Acc, Fn>(std::move(source), std::move(init), std::move(fn));
}

/// `s | fold(init, fn)`.
template <class Acc, class Fn>
auto fold(Acc init, Fn fn) {
  return stream_pipe([init = std::move(init), fn = std::move(fn)]<Stream S>(S source) mutable {
    if constexpr (std::invocable<Fn&, Acc&&, item_t<S>&&>) {
      return fold(std::move(source), std::move(init), std::move(fn));
    } else {
      static_assert(detail::kFalse<S>, "pollux: `stream | fold(init, fn)`: fn cannot take (accumulator, item)");
      return detail::Misused{};
    }
  });
}

}  // namespace pollux
