// select_all(range): polls every future of a range until one is Ready, and
// is Ready with its value, its index in the range, and the futures that have
// not finished (in their order, the winner removed), to go on with.
// Each poll polls all the children through the caller's waker (O(n) per
// wake), starting at a rotating index like select.
// Moves: handing back the rest erases the winner from the vector, which
// moves the children after it. Like Rust's Unpin bound, the children must
// be futures that may move after a poll: channel receivers, JoinHandles,
// BoxFuture (the usual way to put a Sleep or other address-keeping future
// here).
#pragma once

#include <cstddef>
#include <ranges>
#include <stdexcept>
#include <utility>
#include <vector>

#include "pollux/core/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/future/select.hpp"

namespace pollux {

template <class T, class F>
struct SelectAllOutput {
  T value;
  std::size_t index;
  std::vector<F> rest;
};

template <Future F>
class SelectAll {
 public:
  using Output = SelectAllOutput<unit_if_void_t<output_t<F>>, F>;

  // Throws std::invalid_argument for an empty range: it would never be Ready.
  explicit SelectAll(std::vector<F> futures) : children_(std::move(futures)) {
    if (children_.empty()) throw std::invalid_argument("pollux::select_all: needs at least one future, got none");
  }

  Poll<Output> poll(Context& cx) {
    POLLUX_CHECK_NOT_DONE(SelectAll, !done_);
    const std::size_t n = children_.size();
    const std::size_t start = detail::next_select_start() % n;
    for (std::size_t k = 0; k < n; ++k) {
      std::size_t i = start + k;
      if (i >= n) i -= n;
      auto p = poll_unit(children_[i], cx);
      if (p.is_pending()) continue;
      done_ = true;
      children_.erase(children_.begin() + static_cast<std::ptrdiff_t>(i));
      return Poll<Output>(std::in_place, Output{std::move(p).value(), i, std::move(children_)});
    }
    return pending;
  }

 private:
  std::vector<F> children_;
  bool done_ = false;
};

template <Future F>
SelectAll<F> select_all(std::vector<F> futures) {
  return SelectAll<F>(std::move(futures));
}

template <std::ranges::input_range R>
  requires Future<std::ranges::range_value_t<R>> &&
           (!std::is_same_v<std::remove_cvref_t<R>, std::vector<std::ranges::range_value_t<R>>>)
SelectAll<std::ranges::range_value_t<R>> select_all(R&& range) {
  std::vector<std::ranges::range_value_t<R>> futures;
  for (auto&& future : range) futures.push_back(std::move(future));
  return SelectAll<std::ranges::range_value_t<R>>(std::move(futures));
}

}  // namespace pollux
