// skip_while(stream, pred): drops items while pred(const item&) holds, then
// yields the first that fails it and every item after, unchecked.
// Pipe form: `s | skip_while(pred)`. Cancellation: nothing is buffered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <functional>
#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream skip_while(s, pred) returns.
template <Stream S, class Pred>
class [[nodiscard("streams do nothing unless polled")]] SkipWhile {
 public:
  using Item = item_t<S>;

  /// What skip_while() makes; call that instead.
  SkipWhile(S source, Pred pred) : source_(std::move(source)), pred_(std::move(pred)) {}

  /// The source's next item, once pred refused one (that one first).
  Poll<std::optional<Item>> poll_next(Context & cx) {
    for (;;) {
      auto item = source_.poll_next(cx);
      if (!skipping_ || item.is_pending() || !item.value()) return item;
      if (!std::invoke(pred_, std::as_const(*item.value()))) {
        skipping_ = false;
        return item;
      }
    }
  }

 private:
  S source_;
  Pred pred_;
  bool skipping_ = true;
};

}  // namespace stream

/// The items of `source` from the first for which `pred` is false.
template <Stream S, class Pred>
requires std::predicate < Pred&, const item_t<S>
& > stream::SkipWhile<S, Pred> skip_while(S source, Pred pred) {
  return stream::SkipWhile<S, Pred>(std::move(source), std::move(pred));
}

/// `stream | skip_while(pred)`.
template <class Pred>
auto skip_while(Pred pred) {
  return stream_pipe([pred = std::move(pred)]<Stream S>(S source) mutable {
    if constexpr (std::predicate<Pred&, const item_t<S>&>) {
      return skip_while(std::move(source), std::move(pred));
    } else {
      static_assert(detail::kFalse<S>,
                    "pollux: `stream | skip_while(pred)`: pred cannot take a const reference to the stream's items");
      return detail::Misused{};
    }
  });
}

}  // namespace pollux
