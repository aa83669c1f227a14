// flatten(stream of streams): the items of each inner stream in turn; the
// next inner stream is taken when the current one ended. Pipe form:
// `s | flatten()`. Cancellation: destroying it destroys the current inner
// stream with the items it had not yet yielded.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream flatten(s) returns.
template <Stream S>
requires Stream<item_t<S>>
class [[nodiscard("streams do nothing unless polled")]] Flatten {
  using Inner = item_t<S>;

 public:
  using Item = item_t<Inner>;

  /// What flatten() makes; call that instead.
  explicit Flatten(S outer) : outer_(std::move(outer)) {}

  /// The current inner stream's next item; when it ends, the next inner stream's.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    for (;;) {
      if (!inner_) {
        auto next_inner = outer_.poll_next(cx);
        if (next_inner.is_pending()) return pending;
        if (!next_inner.value()) return stream_end;
        inner_.emplace(std::move(*next_inner.value()));
      }
      auto item = inner_->poll_next(cx);
      if (item.is_pending() || item.value()) return item;
      inner_.reset();
    }
  }

 private:
  S outer_;
  std::optional<Inner> inner_;
};

}  // namespace stream

/// The items of the streams that `outer` yields, one stream after another.
template <Stream S>
requires Stream<item_t<S>> stream::Flatten<S> flatten(S outer) { return stream::Flatten<S>(std::move(outer)); }

/// `s | flatten()`.
inline auto flatten() {
  return stream_pipe([]<Stream S>(S outer) { return flatten(std::move(outer)); });
}

}  // namespace pollux
