// any(stream, pred) and all(stream, pred): futures of whether some item
// (every item) satisfies pred(const item&). Both stop at the first item
// that decides, without polling the stream further: any of an empty
// stream is false, all of it true. Pipe forms: `s | any(pred)`,
// `s | all(pred)`. Cancellation: destroying it loses nothing but the
// answer; the items it looked at are gone either way.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <functional>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The future any(s, pred) (Wanted true) or all(s, pred) (Wanted false)
/// returns: Ready with Wanted at the first item for which pred is Wanted.
template <Stream S, class Pred, bool Wanted>
class [[nodiscard("futures do nothing unless polled")]] AnyAll {
 public:
  using Output = bool;

  /// What any() or all()() makes; call that instead.
  AnyAll(S source, Pred pred) : source_(std::move(source)), pred_(std::move(pred)) {}

  /// Takes items until one decides the answer (or the stream ends); Ready with the answer.
  Poll<bool> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(AnyAll, !done_);
    for (;;) {
      auto item = source_.poll_next(cx);
      if (item.is_pending()) return pending;
      if (!item.value()) {
        done_ = true;
        return ready(!Wanted);
      }
      if (static_cast<bool>(std::invoke(pred_, std::as_const(*item.value()))) == Wanted) {
        done_ = true;
        return ready(Wanted);
      }
    }
  }

 private:
  S source_;
  Pred pred_;
  bool done_ = false;
};

}  // namespace stream

/// Whether some item of `source` satisfies `pred`.
template <Stream S, class Pred>
requires std::predicate < Pred&, const item_t<S>
& > stream::AnyAll<S, Pred, true> any(S source, Pred pred) { return {std::move(source), std::move(pred)}; }

/// Whether every item of `source` satisfies `pred`.
template <Stream S, class Pred>
requires std::predicate < Pred&, const item_t<S>
& > stream::AnyAll<S, Pred, false> all(S source, Pred pred) { return {std::move(source), std::move(pred)}; }

/// `s | any(pred)`.
template <class Pred>
auto any(Pred pred) {
  return stream_pipe([pred = std::move(pred)]<Stream S>(S source) mutable {
    if constexpr (std::predicate<Pred&, const item_t<S>&>) {
      return any(std::move(source), std::move(pred));
    } else {
      static_assert(detail::kFalse<S>,
                    "pollux: `stream | any(pred)`: pred cannot take a const reference to the stream's items");
      return detail::Misused{};
    }
  });
}

/// `s | all(pred)`.
template <class Pred>
auto all(Pred pred) {
  return stream_pipe([pred = std::move(pred)]<Stream S>(S source) mutable {
    if constexpr (std::predicate<Pred&, const item_t<S>&>) {
      return all(std::move(source), std::move(pred));
    } else {
      static_assert(detail::kFalse<S>,
                    "pollux: `stream | all(pred)`: pred cannot take a const reference to the stream's items");
      return detail::Misused{};
    }
  });
}

}  // namespace pollux
