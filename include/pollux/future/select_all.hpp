// select_all(range): polls every future of a range until one is Ready, and
// is Ready with its value, its index in the range, and the futures that have
// not finished, to go on with. As in futures-rs, the last future takes the
// winner's place in `rest` (an O(1) removal), so the order of `rest` is the
// input order except at `index`.
// Each poll polls all the children through the caller's waker (O(n) per
// wake), starting at a rotating index like select; for few, cheap children
// that scan beats giving each child a waker of its own.
// Moves: handing back the rest moves the last child into the winner's
// place. Like Rust's Unpin bound, the children must be futures that may
// move after a poll: channel receivers, JoinHandles, BoxFuture (the usual
// way to put a Sleep or other address-keeping future here).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <memory>
#include <ranges>
#include <stdexcept>
#include <utility>
#include <vector>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/future/detail/collect_futures.hpp"
#include "pollux/future/select.hpp"

namespace pollux {

/// What select_all(range) returns: polls every future of a range until one is Ready, and is Ready
/// with its value, its index in the range, and the futures that have not finished, to go on with.
template <class T, class F>
struct SelectAllOutput {
  /// The output of the future that finished first.
  T value;
  /// Its index in the input.
  std::size_t index;
  /// The futures still running, in input order without the winner.
  std::vector<F> rest;
};

/// What select_all(range) returns: polls every future of a range until one is Ready, and is Ready
/// with its value, its index in the range, and the futures that have not finished, to go on with.
template <Future F>
class [[nodiscard("futures do nothing unless polled")]] SelectAll {
 public:
  using Output = SelectAllOutput<unit_if_void_t<output_t<F>>, F>;

  /// Throws std::invalid_argument for an empty range: it would never be Ready.
  explicit SelectAll(std::vector<F> futures) : children_(std::move(futures)) {
    if (children_.empty()) throw std::invalid_argument("pollux::select_all: needs at least one future, got none");
  }

  /// Polls the futures; Ready with the first output and its index as soon as one is Ready.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(SelectAll, !done_);
    // Rotating start, walked as two plain ranges so the loop over the
    // children stays a tight one: [start, n), then [0, start).
    const std::size_t n = children_.size();
    const std::size_t start = detail::next_select_start() % n;
    for (std::size_t i = start; i < n; ++i) {
      if (auto p = poll_unit(children_[i], cx); p.is_ready()) return finish(i, std::move(p).value());
    }
    for (std::size_t i = 0; i < start; ++i) {
      if (auto p = poll_unit(children_[i], cx); p.is_ready()) return finish(i, std::move(p).value());
    }
    return pending;
  }

 private:
  Poll<Output> finish(std::size_t index, unit_if_void_t<output_t<F>> && value) {
    done_ = true;
    if (index + 1 != children_.size()) {
      // Destroy the winner, then move the last child into its place.
      std::destroy_at(&children_[index]);
      std::construct_at(&children_[index], std::move(children_.back()));
    }
    children_.pop_back();
    return Poll<Output>(std::in_place, Output{std::move(value), index, std::move(children_)});
  }

  std::vector<F> children_;
  bool done_ = false;
};

/// Waits for the first of `futures`: Ready with its value, its index and the
/// futures still running. Throws std::invalid_argument for an empty vector.
template <Future F>
SelectAll<F> select_all(std::vector<F> futures) {
  return SelectAll<F>(std::move(futures));
}

/// select_all() over any range of futures (moved out of it).
template <std::ranges::input_range R>
requires Future<std::ranges::range_value_t<R>> &&(
    !std::is_same_v<std::remove_cvref_t<R>, std::vector<std::ranges::range_value_t<R>>>)
    SelectAll<std::ranges::range_value_t<R>> select_all(R&& range) {
  return SelectAll<std::ranges::range_value_t<R>>(detail::collect_futures(std::forward<R>(range)));
}

}  // namespace pollux
