// enumerate(stream): pairs (index, item), the index counting from 0.
// Pipe form: `s | enumerate()`. Cancellation: nothing is buffered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream enumerate(s) returns.
template <Stream S>
class [[nodiscard("streams do nothing unless polled")]] Enumerate {
 public:
  using Item = std::pair<std::size_t, item_t<S>>;

  /// What enumerate() makes; call that instead.
  explicit Enumerate(S source) : source_(std::move(source)) {}

  /// The source's next item, with its index from 0.
  Poll<std::optional<Item>> poll_next(Context & cx) {
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
