// join(fs...): runs every future to completion, concurrently, and is Ready
// with a tuple of their outputs (Unit for void ones) in argument order.
// Each poll polls the children that are not done yet, all through the
// caller's waker: for a handful of children that is cheaper than a waker of
// their own (join_all gives each child one).
// Cancellation: destroying a Join destroys every child; outputs already
// produced are dropped with it. An exception from a child propagates out of
// poll; the Join may then only be destroyed (rule 7).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <tuple>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/maybe_done.hpp"

namespace pollux {

/// What join(fs...) returns: runs every future to completion, concurrently, and is Ready with a
/// tuple of their outputs (Unit for void ones) in argument order.
template <Future... Fs>
class [[nodiscard("futures do nothing unless polled")]] Join {
 public:
  using Output = std::tuple<unit_if_void_t<output_t<Fs>>...>;

  /// What join(fs...) makes: polls every child until all are Ready.
  explicit Join(Fs... futures) : children_(MaybeDone<Fs>(std::move(futures))...) {}

  /// Polls each child not yet Ready; Ready with all their outputs once the last one is.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Join, !done_);
    // Every child gets its poll, not just the first ones until one is
    // pending: a fold over `,` that counts the children done.
    std::size_t done = 0;
    std::apply([&](auto&... child) { ((done += child.poll(cx) ? 1 : 0), ...); }, children_);
    bool all_done = done == sizeof...(Fs);
    if (!all_done) return pending;
    done_ = true;
    return std::apply([](auto&... child) { return Poll<Output>(std::in_place, child.take()...); }, children_);
  }

 private:
  std::tuple<MaybeDone<Fs>...> children_;
  bool done_ = false;
};

/// Waits for every future; Ready with a tuple of their outputs (Unit for void).
template <Future... Fs>
Join<Fs...> join(Fs... futures) {
  return Join<Fs...>(std::move(futures)...);
}

}  // namespace pollux
