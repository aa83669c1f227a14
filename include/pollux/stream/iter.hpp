// iter(range): a stream of a range's elements, always ready (futures-rs's
// stream::iter). The stream owns the range it is given: pass a container by
// value (it is moved from, element by element) or a view such as
// std::views::iota(0, n) or std::views::all(v) to borrow (elements are
// copied). The iterator is taken on the first poll, so the stream may be
// moved until then (rule 4), even over a container with inline storage;
// over a borrowed range (a view) it is taken at once.
// Never Pending, it spends no coop budget: a consumer that keeps polling it
// runs to its end in one poll, as a loop over the range would.
// Cancellation: the elements not yet yielded stay in the stream.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <ranges>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream iter(range) returns.
template <std::ranges::input_range R>
class [[nodiscard("streams do nothing unless polled")]] Iter {
  // A borrowed range (a view like iota, or a reference to a container) has
  // iterators that do not point into the range object, so they are taken
  // at once and the hot path has no "begun yet?" test; any other range is
  // begun on the first poll, after its last move.
  static constexpr bool kEager = std::ranges::borrowed_range<R>;
  using Iterator = std::ranges::iterator_t<R>;
  using Sentinel = std::ranges::sentinel_t<R>;

 public:
  using Item = std::ranges::range_value_t<R>;

  /// What iter() makes; call that instead.
  explicit Iter(R range) : range_(std::move(range)) {
    if constexpr (kEager) position_.emplace(std::ranges::begin(range_), std::ranges::end(range_));
  }

  /// The range's next element, at once; the end after the last.
  Poll<std::optional<Item>> poll_next(Context&) {
    if constexpr (!kEager) {
      if (!position_) position_.emplace(std::ranges::begin(range_), std::ranges::end(range_));
    }
    auto& [it, end] = *position_;
    if (it == end) [[unlikely]]
      return stream_end;  // keeps the loop over items straight
    if constexpr (std::ranges::view<R>) {
      Item item = *it;  // a view borrows: copy
      ++it;
      return ready(std::move(item));
    } else {
      Item item = std::ranges::iter_move(it);  // the range is ours: move
      ++it;
      return ready(std::move(item));
    }
  }

 private:
  R range_;
  std::optional<std::pair<Iterator, Sentinel>> position_;
};

}  // namespace stream

/// A stream of the elements of `range`, in order.
template <std::ranges::input_range R>
stream::Iter<R> iter(R range) {
  return stream::Iter<R>(std::move(range));
}

}  // namespace pollux
