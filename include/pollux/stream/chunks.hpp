// chunks(stream, n): the items in vectors of n (the last one shorter if the
// stream ends mid-way). A chunk is yielded as soon as it is full; items
// that arrived before the source went Pending wait in the current chunk.
// n == 0 is a std::invalid_argument. One allocation per chunk (its vector),
// none per item. Pipe form: `s | chunks(n)`.
// Cancellation: destroying it loses the partly filled chunk.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream chunks(s, n) returns.
template <Stream S>
class [[nodiscard("streams do nothing unless polled")]] Chunks {
 public:
  using Item = std::vector<item_t<S>>;

  /// What chunks() makes; call that instead.
  Chunks(S source, std::size_t n) : source_(std::move(source)), size_(n) {
    if (n == 0) throw std::invalid_argument("pollux::chunks: the chunk size must be at least 1");
  }

  /// The next chunk of up to n items; a shorter last one at the end.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (done_) return stream_end;
    for (;;) {
      auto item = source_.poll_next(cx);
      if (item.is_pending()) return pending;
      if (!item.value()) {
        done_ = true;
        if (chunk_.empty()) return stream_end;
        return ready(std::exchange(chunk_, Item{}));
      }
      if (chunk_.empty()) chunk_.reserve(size_);
      chunk_.push_back(std::move(*item.value()));
      if (chunk_.size() == size_) return ready(std::exchange(chunk_, Item{}));
    }
  }

 private:
  S source_;
  std::size_t size_;
  Item chunk_;
  bool done_ = false;
};

}  // namespace stream

/// The items of `source` in vectors of `n`.
template <Stream S>
stream::Chunks<S> chunks(S source, std::size_t n) {
  return stream::Chunks<S>(std::move(source), n);
}

/// `s | chunks(n)`.
inline auto chunks(std::size_t n) {
  return stream_pipe([n]<Stream S>(S source) { return chunks(std::move(source), n); });
}

}  // namespace pollux
