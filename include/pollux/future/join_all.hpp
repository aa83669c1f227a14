// join_all(range): runs every future of a range to completion and is Ready
// with a vector of their outputs, in input order.
// O(1) per wake-up: each child is polled through a waker of its own
// (ChildSlots), and a poll visits only the children woken since the last
// one. With 10,000 children and one wake, one child's poll runs.
// Cancellation: destroying a JoinAll destroys every child that has not
// finished and drops the outputs gathered so far.
// Coop: when the task's budget runs out mid-poll, the children not yet
// visited wait for the next poll, so a huge join cannot starve its thread.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <array>
#include <cstddef>
#include <iterator>
#include <ranges>
#include <utility>
#include <vector>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/future/detail/collect_futures.hpp"
#include "pollux/future/join_array.hpp"
#include "pollux/core/maybe_done.hpp"
#include "pollux/future/detail/child_slots.hpp"

namespace pollux {

/// What join_all(range) returns: runs every future of a range to completion and is Ready with a
/// vector of their outputs, in input order.
template <Future F>
class [[nodiscard("futures do nothing unless polled")]] JoinAll {
 public:
  using Output = std::vector<unit_if_void_t<output_t<F>>>;

  /// What join_all(range) makes over `futures`.
  explicit JoinAll(std::vector<F> futures) : children_(futures.size()), remaining_(futures.size()) {
    for (F& future : futures) children_.construct_next(std::move(future));
  }

  /// Polls the children that were woken; Ready with every output, in order, once all are Ready.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(JoinAll, !done_);
    children_.register_parent(cx.waker());
    bool left_over = children_.for_each_woken([&](std::size_t index, const Waker& child_waker) {
      Context child_cx(child_waker);
      if (!children_[index].is_done() && children_[index].poll(child_cx)) --remaining_;
    });
    if (remaining_ != 0) {
      if (left_over) cx.waker().wake_by_ref();  // budget spent: come back for the rest
      return pending;
    }
    done_ = true;
    Output outputs;
    outputs.reserve(children_.size());
    for (std::size_t i = 0; i < children_.size(); ++i) outputs.push_back(children_[i].take());
    return Poll<Output>(std::in_place, std::move(outputs));
  }

 private:
  detail::ChildSlots<MaybeDone<F>> children_;
  std::size_t remaining_;
  bool done_ = false;
};

/// Waits for every future of `futures`; Ready with their outputs in input
/// order. O(1) per wake-up of a child.
template <Future F>
JoinAll<F> join_all(std::vector<F> futures) {
  return JoinAll<F>(std::move(futures));
}

namespace detail {
template <class R>
inline constexpr bool kIsStdArray = false;
template <class T, std::size_t N>
inline constexpr bool kIsStdArray<std::array<T, N>> = true;
}  // namespace detail

/// Any input range of futures; the futures are moved out of it. (A
/// std::array goes to the overload in join_array.hpp: a std::array of
/// outputs, with nothing allocated.)
template <std::ranges::input_range R>
requires Future<std::ranges::range_value_t<R>> &&(
    !std::is_same_v<std::remove_cvref_t<R>,
                    std::vector<std::ranges::range_value_t<R>>>)&&(!detail::kIsStdArray<std::remove_cvref_t<R>>)
    JoinAll<std::ranges::range_value_t<R>> join_all(R&& range) {
  return JoinAll<std::ranges::range_value_t<R>>(detail::collect_futures(std::forward<R>(range)));
}

}  // namespace pollux
