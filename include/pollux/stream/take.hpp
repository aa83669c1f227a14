// take(stream, n): the first n items, then the end. The source is not
// polled again once n items went by, so take(n) bounds an endless stream.
// Pipe form: `s | take(n)`. Cancellation: nothing is buffered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream take(s, n) returns.
template <Stream S>
class [[nodiscard("streams do nothing unless polled")]] Take {
 public:
  using Item = item_t<S>;

  /// What take() makes; call that instead.
  Take(S source, std::size_t n) : source_(std::move(source)), remaining_(n) {}

  /// The source's next item, until n were given; then the end.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (remaining_ == 0) return stream_end;
    auto item = source_.poll_next(cx);
    if (item.is_ready()) remaining_ = item.value() ? remaining_ - 1 : 0;
    return item;
  }

 private:
  S source_;
  std::size_t remaining_;  // 0 also once the source ended
};

}  // namespace stream

/// The first `n` items of `source`.
template <Stream S>
stream::Take<S> take(S source, std::size_t n) {
  return stream::Take<S>(std::move(source), n);
}

/// `stream | take(n)`.
inline auto take(std::size_t n) {
  return stream_pipe([n]<Stream S>(S source) { return take(std::move(source), n); });
}

}  // namespace pollux
