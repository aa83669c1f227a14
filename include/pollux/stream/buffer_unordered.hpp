// buffer_unordered(stream of futures, n): runs up to n of the stream's
// futures at once and yields their outputs as they finish, in any order.
// Built on FuturesUnordered: O(1) per wake-up, and the n nodes are reused,
// so once n futures ran nothing more is allocated. The source is polled for
// more only while fewer than n run; the stream ends when the source ended
// and every future finished. n == 0 is a std::invalid_argument.
// Pipe form: `s | buffer_unordered(n)`.
// Cancellation: destroying it destroys the running futures; next() on it
// loses nothing (a finished output is yielded, never held back).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <utility>

#include "pollux/core/future.hpp"
#include "pollux/stream/futures_unordered.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream buffer_unordered(s, n) returns.
template <Stream S>
requires Future<item_t<S>>
class [[nodiscard("streams do nothing unless polled")]] BufferUnordered {
  using F = item_t<S>;

 public:
  using Item = unit_if_void_t<output_t<F>>;

  /// What buffer_unordered() makes; call that instead.
  BufferUnordered(S source, std::size_t n) : source_(std::move(source)), limit_(n) {
    if (n == 0) throw std::invalid_argument("pollux::buffer_unordered: the limit must be at least 1");
    running_.set_spare_nodes(n);
  }

  /// The next output of the futures running, in the order they finish; nullopt once the source
  /// ended and none is left.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    // Fill the free slots first, so that the new futures run in this poll.
    while (!source_done_ && running_.size() < limit_) {
      auto future = source_.poll_next(cx);
      if (future.is_pending()) break;
      if (!future.value()) {
        source_done_ = true;
        break;
      }
      running_.push(std::move(*future.value()));
    }
    if (running_.empty()) {
      if (source_done_) return stream_end;
      return pending;  // the source stored our waker
    }
    auto out = running_.poll_next(cx);
    if (out.is_pending()) return pending;
    return ready(std::move(*out.value()));  // not empty, so an output
  }

 private:
  S source_;
  FuturesUnordered<F> running_;
  std::size_t limit_;
  bool source_done_ = false;
};

}  // namespace stream

/// Runs up to `n` futures of `source` at once; their outputs as they finish.
template <Stream S>
requires Future<item_t<S>> stream::BufferUnordered<S> buffer_unordered(S source, std::size_t n) {
  return stream::BufferUnordered<S>(std::move(source), n);
}

/// `s | buffer_unordered(n)`.
inline auto buffer_unordered(std::size_t n) {
  return stream_pipe([n]<Stream S>(S source) { return buffer_unordered(std::move(source), n); });
}

}  // namespace pollux
