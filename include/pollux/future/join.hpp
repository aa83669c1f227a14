// join(fs...): runs every future to completion, concurrently, and is Ready
// with a tuple of their outputs (Unit for void ones) in argument order.
// Each poll polls the children that are not done yet, all through the
// caller's waker: for a handful of children that is cheaper than a waker of
// their own (join_all gives each child one).
// Cancellation: destroying a Join destroys every child; outputs already
// produced are dropped with it. An exception from a child propagates out of
// poll; the Join may then only be destroyed (rule 7).
#pragma once

#include <tuple>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/maybe_done.hpp"

namespace pollux {

template <Future... Fs>
class Join {
 public:
  using Output = std::tuple<unit_if_void_t<output_t<Fs>>...>;

  explicit Join(Fs... futures) : children_(MaybeDone<Fs>(std::move(futures))...) {}

  Poll<Output> poll(Context& cx) {
    POLLUX_CHECK_NOT_DONE(Join, !done_);
    // `&` rather than `&&`: every child gets its poll, not just the first
    // ones until one is pending.
    bool all_done = std::apply([&](auto&... child) { return (true & ... & child.poll(cx)); }, children_);
    if (!all_done) return pending;
    done_ = true;
    return std::apply([](auto&... child) { return Poll<Output>(std::in_place, child.take()...); }, children_);
  }

 private:
  std::tuple<MaybeDone<Fs>...> children_;
  bool done_ = false;
};

template <Future... Fs>
Join<Fs...> join(Fs... futures) {
  return Join<Fs...>(std::move(futures)...);
}

}  // namespace pollux
