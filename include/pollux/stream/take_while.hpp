// take_while(stream, pred): items while pred(const item&) holds; the first
// item that fails it is dropped and ends the stream (the source is not
// polled again). Pipe form: `s | take_while(pred)`. Cancellation: nothing
// is buffered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <functional>
#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream take_while(s, pred) returns.
template <Stream S, class Pred>
class [[nodiscard("streams do nothing unless polled")]] TakeWhile {
 public:
  using Item = item_t<S>;

  /// What take_while() makes; call that instead.
  TakeWhile(S source, Pred pred) : source_(std::move(source)), pred_(std::move(pred)) {}

  /// The source's next item while pred accepts them; the end at the first it refuses.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (done_) return stream_end;
    auto item = source_.poll_next(cx);
    if (item.is_pending()) return pending;
    if (!item.value() || !std::invoke(pred_, std::as_const(*item.value()))) {
      done_ = true;
      return stream_end;
    }
    return item;
  }

 private:
  S source_;
  Pred pred_;
  bool done_ = false;
};

}  // namespace stream

/// The items of `source` up to the first for which `pred` is false.
template <Stream S, class Pred>
requires std::predicate < Pred&, const item_t<S>
& > stream::TakeWhile<S, Pred> take_while(S source, Pred pred) {
  return stream::TakeWhile<S, Pred>(std::move(source), std::move(pred));
}

/// `stream | take_while(pred)`.
template <class Pred>
auto take_while(Pred pred) {
  return stream_pipe([pred = std::move(pred)]<Stream S>(S source) mutable {
    if constexpr (std::predicate<Pred&, const item_t<S>&>) {
      return take_while(std::move(source), std::move(pred));
    } else {
      static_assert(detail::kFalse<S>,
                    "pollux: `stream | take_while(pred)`: pred cannot take a const reference to the stream's items");
      return detail::Misused{};
    }
  });
}

}  // namespace pollux
