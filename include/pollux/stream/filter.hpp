// filter(stream, pred): the items for which pred(const item&) is true.
// Items the predicate rejects are dropped on the poll that finds them.
// Pipe form: `s | filter(pred)`. Cancellation: nothing is buffered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <functional>
#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream filter(s, pred) returns.
template <Stream S, class Pred>
class [[nodiscard("streams do nothing unless polled")]] Filter {
 public:
  using Item = item_t<S>;

  /// What filter() makes; call that instead.
  Filter(S source, Pred pred) : source_(std::move(source)), pred_(std::move(pred)) {}

  /// The source's next item that pred accepts.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    for (;;) {
      auto item = source_.poll_next(cx);
      if (item.is_pending() || !item.value()) return item;
      // [[likely]] lays the passing item out on the straight path into the
      // consumer's code, so a pipeline's loop takes one jump per item.
      if (std::invoke(pred_, std::as_const(*item.value()))) [[likely]]
        return item;
    }
  }

 private:
  S source_;
  Pred pred_;
};

}  // namespace stream

/// The items of `source` for which `pred(item)` is true.
template <Stream S, class Pred>
requires std::predicate < Pred&, const item_t<S>
& > stream::Filter<S, Pred> filter(S source, Pred pred) {
  return stream::Filter<S, Pred>(std::move(source), std::move(pred));
}

/// `stream | filter(pred)`.
template <class Pred>
auto filter(Pred pred) {
  return stream_pipe([pred = std::move(pred)]<Stream S>(S source) mutable {
    if constexpr (std::predicate<Pred&, const item_t<S>&>) {
      return filter(std::move(source), std::move(pred));
    } else {
      static_assert(detail::kFalse<S>,
                    "pollux: `stream | filter(pred)`: pred cannot take a const reference to the stream's items");
      return detail::Misused{};
    }
  });
}

}  // namespace pollux
