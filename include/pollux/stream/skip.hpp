// skip(stream, n): all but the first n items (dropped as they come).
// Pipe form: `s | skip(n)`. Cancellation: nothing is buffered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream skip(s, n) returns.
template <Stream S>
class [[nodiscard("streams do nothing unless polled")]] Skip {
 public:
  using Item = item_t<S>;

  /// What skip() makes; call that instead.
  Skip(S source, std::size_t n) : source_(std::move(source)), remaining_(n) {}

  /// The source's next item, after the first n were dropped.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    for (;;) {
      auto item = source_.poll_next(cx);
      if (remaining_ == 0 || item.is_pending() || !item.value()) return item;
      --remaining_;
    }
  }

 private:
  S source_;
  std::size_t remaining_;
};

}  // namespace stream

/// The items of `source` after the first `n`.
template <Stream S>
stream::Skip<S> skip(S source, std::size_t n) {
  return stream::Skip<S>(std::move(source), n);
}

/// `stream | skip(n)`.
inline auto skip(std::size_t n) {
  return stream_pipe([n]<Stream S>(S source) { return skip(std::move(source), n); });
}

}  // namespace pollux
