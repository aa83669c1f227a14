// buffered(stream of futures, n): runs up to n of the stream's futures at
// once and yields their outputs in the stream's order (an output that
// finished early waits for those before it, and counts toward n while it
// waits). Built on FuturesOrdered; nothing is allocated once n futures
// ran. n == 0 is a std::invalid_argument. Pipe form: `s | buffered(n)`.
// Cancellation: destroying it destroys the running futures and the outputs
// waiting their turn; next() on it loses nothing.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <utility>

#include "pollux/core/future.hpp"
#include "pollux/stream/futures_ordered.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream buffered(s, n) returns.
template <Stream S>
requires Future<item_t<S>>
class [[nodiscard("streams do nothing unless polled")]] Buffered {
  using F = item_t<S>;

 public:
  using Item = unit_if_void_t<output_t<F>>;

  /// What buffered() makes; call that instead.
  Buffered(S source, std::size_t n) : source_(std::move(source)), limit_(n) {
    if (n == 0) throw std::invalid_argument("pollux::buffered: the limit must be at least 1");
    queue_.set_spare_nodes(n);
  }

  /// The next output in the source's order; nullopt once the source ended and none is left.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    while (!source_done_ && queue_.size() < limit_) {
      auto future = source_.poll_next(cx);
      if (future.is_pending()) break;
      if (!future.value()) {
        source_done_ = true;
        break;
      }
      queue_.push_back(std::move(*future.value()));
    }
    if (queue_.empty()) {
      if (source_done_) return stream_end;
      return pending;  // the source stored our waker
    }
    auto out = queue_.poll_next(cx);
    if (out.is_pending()) return pending;
    return ready(std::move(*out.value()));
  }

 private:
  S source_;
  FuturesOrdered<F> queue_;
  std::size_t limit_;
  bool source_done_ = false;
};

}  // namespace stream

/// Runs up to `n` futures of `source` at once; their outputs in order.
template <Stream S>
requires Future<item_t<S>> stream::Buffered<S> buffered(S source, std::size_t n) {
  return stream::Buffered<S>(std::move(source), n);
}

/// `s | buffered(n)`.
inline auto buffered(std::size_t n) {
  return stream_pipe([n]<Stream S>(S source) { return buffered(std::move(source), n); });
}

}  // namespace pollux
