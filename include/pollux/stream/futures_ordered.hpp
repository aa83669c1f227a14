// FuturesOrdered<F>: a queue of futures, polled together, that yields their
// outputs in the order the futures were pushed (a Stream; it ends when the
// queue is empty). The futures run in a FuturesUnordered (O(1) per
// wake-up); an output that finishes before those pushed earlier waits in a
// ring indexed by push order, which grows only when more futures are in the
// queue than ever before. With set_spare_nodes(n), as FuturesUnordered, a
// queue that stays under n allocates nothing once warm.
// Cancellation: destroying it destroys every future and every waiting
// output; next() on it loses nothing.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "pollux/core/future.hpp"
#include "pollux/stream/futures_unordered.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {

namespace detail {
/// A future with its place in the queue, which its output carries back.
template <Future F>
class [[nodiscard("futures do nothing unless polled")]] Indexed {
 public:
  using Output = std::pair<std::uint64_t, unit_if_void_t<output_t<F>>>;

  Indexed(F future, std::uint64_t index) : future_(std::move(future)), index_(index) {}

  Poll<Output> poll(Context & cx) {
    auto out = poll_unit(future_, cx);
    if (out.is_pending()) return pending;
    return Poll<Output>(std::in_place, index_, std::move(out).value());
  }

 private:
  F future_;
  std::uint64_t index_;
};
}  // namespace detail

/// A queue of futures, polled together, that yields their outputs in the order the futures were
/// pushed (a Stream;
template <Future F>
class [[nodiscard("streams do nothing unless polled")]] FuturesOrdered {
 public:
  using Item = unit_if_void_t<output_t<F>>;
  /// Ends while empty and yields again after an insert (a RefillableStream).
  static constexpr bool refillable = true;

  FuturesOrdered() = default;
  FuturesOrdered(FuturesOrdered &&) noexcept = default;
  FuturesOrdered& operator=(FuturesOrdered&&) = delete;

  /// Adds a future at the back: its output comes after all earlier ones'.
  void push_back(F future) {
    if (next_in_ - next_out_ >= ring_.size()) grow();
    running_.push(detail::Indexed<F>(std::move(future), next_in_++));
  }

  /// Keeps up to `n` nodes of finished futures for reuse.
  void set_spare_nodes(std::size_t n) noexcept { running_.set_spare_nodes(n); }

  /// Futures running or finished whose output has not been yielded yet.
  std::size_t size() const noexcept { return static_cast<std::size_t>(next_in_ - next_out_); }
  /// True when no future is left.
  bool empty() const noexcept { return next_in_ == next_out_; }

  /// The next output in push order; the end while the queue is empty.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    for (;;) {
      if (empty()) return stream_end;
      if (auto& head = slot(next_out_); head) return take(head);
      auto out = running_.poll_next(cx);
      if (out.is_pending()) return pending;
      if (!out.value()) return stream_end;  // nothing runs, so nothing waits
      auto& [index, value] = *out.value();
      if (index == next_out_) {
        ++next_out_;
        return ready(std::move(value));
      }
      slot(index).emplace(std::move(value));
    }
  }

 private:
  std::optional<Item>& slot(std::uint64_t index) noexcept { return ring_[index & (ring_.size() - 1)]; }

  Poll<std::optional<Item>> take(std::optional<Item> & head) {
    Item value = std::move(*head);
    head.reset();
    ++next_out_;
    return ready(std::move(value));
  }

  // Doubles the ring (a power of two), each waiting output keeping its
  // index.
  void grow() {
    std::vector<std::optional<Item>> bigger(ring_.empty() ? 8 : ring_.size() * 2);
    for (std::uint64_t i = next_out_; i != next_in_; ++i) {
      auto& old = slot(i);
      if (old) bigger[i & (bigger.size() - 1)] = std::move(old);
    }
    ring_ = std::move(bigger);
  }

  FuturesUnordered<detail::Indexed<F>> running_;
  std::vector<std::optional<Item>> ring_;  // outputs by index, while they wait
  std::uint64_t next_in_ = 0;              // the index of the next push
  std::uint64_t next_out_ = 0;             // the index of the next output
};

}  // namespace pollux
