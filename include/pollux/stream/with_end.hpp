// with_end(stream): the items of a stream as std::optional, then one
// nullopt item for its end, then the end. What a loop over a merge of
// streams needs to see that one source ended (a client's connection) while
// the others go on: `merge_variant(framed | with_end(), subscriptions)`.
// Pipe form: `s | with_end()`. Cancellation: nothing is buffered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream with_end(s) returns: s's items, then nullopt once.
template <Stream S>
class [[nodiscard("streams do nothing unless polled")]] WithEnd {
 public:
  /// An item of the source, or nullopt: the source ended.
  using Item = std::optional<item_t<S>>;

  /// What with_end() makes; call that instead.
  explicit WithEnd(S source) : source_(std::move(source)) {}

  /// The source's next item; at its end, nullopt as an item, then the end.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (ended_) return stream_end;
    auto item = source_.poll_next(cx);
    if (item.is_pending()) return pending;
    if (!item.value()) ended_ = true;
    return Poll<std::optional<Item>>(std::in_place, std::move(item).value());
  }

 private:
  S source_;
  bool ended_ = false;
};

}  // namespace stream

/// `source`'s items as optionals, then nullopt for its end.
template <Stream S>
stream::WithEnd<S> with_end(S source) {
  return stream::WithEnd<S>(std::move(source));
}

/// The pipe form: `s | with_end()`.
inline auto with_end() {
  return stream_pipe([](auto source) { return with_end(std::move(source)); });
}

}  // namespace pollux
