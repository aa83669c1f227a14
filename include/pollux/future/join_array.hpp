// join_all(std::array<F, N>): runs N futures of one type to completion and
// is Ready with a std::array of their outputs, in input order. The children
// live inline, so it allocates nothing (the embedded profile's join_all).
// Like join, each poll polls every child not yet done, through the caller's
// waker: N is fixed when the program is compiled, and for the handful of
// children an array holds that costs less than a waker per child (a
// join_all over a range gives each child its own, for O(1) per wake-up).
// Cancellation: destroying a JoinArray destroys every child; outputs
// already produced are dropped with it.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <array>
#include <cstddef>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/maybe_done.hpp"

namespace pollux {

/// What join_all(std::array<F, N>) returns: runs N futures to completion, concurrently, and is
/// Ready with a std::array of their outputs (Unit for void ones) in input order.
template <Future F, std::size_t N>
class [[nodiscard("futures do nothing unless polled")]] JoinArray {
 public:
  using Output = std::array<unit_if_void_t<output_t<F>>, N>;

  /// What join_all(std::array) makes over `futures`.
  explicit JoinArray(std::array<F, N> futures) : JoinArray(std::move(futures), std::make_index_sequence<N>{}) {}

  /// Polls each child not yet Ready; Ready with all their outputs once the last one is.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(JoinArray, !done_);
    // Every child gets its poll, not just those before the first pending.
    std::size_t done = 0;
    for (MaybeDone<F>& child : children_) done += child.poll(cx) ? 1 : 0;
    if (done != N) return pending;
    done_ = true;
    return take_all(std::make_index_sequence<N>{});
  }

 private:
  template <std::size_t... I>
  JoinArray(std::array<F, N> && futures, std::index_sequence<I...>)
      : children_{MaybeDone<F>(std::move(futures[I]))...} {}

  // The outputs are built in place: they need not be default-constructible.
  template <std::size_t... I>
  Poll<Output> take_all(std::index_sequence<I...>) {
    return Poll<Output>(std::in_place, Output{children_[I].take()...});
  }

  std::array<MaybeDone<F>, N> children_;
  bool done_ = false;
};

/// Waits for the N futures of `futures`; Ready with a std::array of their
/// outputs in input order. Allocates nothing.
template <Future F, std::size_t N>
JoinArray<F, N> join_all(std::array<F, N> futures) {
  return JoinArray<F, N>(std::move(futures));
}

}  // namespace pollux
