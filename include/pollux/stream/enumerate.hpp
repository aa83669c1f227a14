// enumerate(stream): pairs (index, item), the index counting from 0.
// Pipe form: `s | enumerate()`. Cancellation: nothing is buffered.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream enumerate(s) returns.
template <Stream S>
class Enumerate {
 public:
  using Item = std::pair<std::size_t, item_t<S>>;

  explicit Enumerate(S source) : source_(std::move(source)) {}

  Poll<std::optional<Item>> poll_next(Context& cx) {
    auto item = source_.poll_next(cx);
    if (item.is_pending()) return pending;
    if (!item.value()) return stream_end;
    return Poll<std::optional<Item>>(std::in_place, std::in_place, count_++, std::move(*item.value()));
  }

 private:
  S source_;
  std::size_t count_ = 0;
};

}  // namespace stream

/// Each item of `source` with its index.
template <Stream S>
stream::Enumerate<S> enumerate(S source) {
  return stream::Enumerate<S>(std::move(source));
}

/// `stream | enumerate()`.
inline auto enumerate() {
  return stream_pipe([]<Stream S>(S source) { return enumerate(std::move(source)); });
}

}  // namespace pollux
