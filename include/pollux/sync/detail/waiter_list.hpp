// WaiterList: the wait list of a primitive that wakes all its waiters at
// once (broadcast receivers waiting for a value, watch receivers waiting
// for a change). Each waiting future embeds a ListedWaiter node: linking
// allocates nothing, and the future's destructor unlinks it (rule 5). Every
// function here is called with the primitive's lock held; wake_all
// collects the wakers into a WakeList that wakes them after the lock.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/core/detail/intrusive_list.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/detail/pin_check.hpp"
#include "pollux/core/waker.hpp"
#include "pollux/sync/detail/wake_list.hpp"

namespace pollux::detail {

/// The node a waiting future embeds. `queued` and `waker` are touched
/// only by WaiterList's members, which run under the owner's lock: the
/// owner's WaiterList is marked POLLUX_GUARDED_BY that lock, so the
/// analysis checks every call.
struct ListedWaiter {
  ListHook<ListedWaiter> hook;
  Waker waker;
  bool queued = false;
};

class WaiterList {
 public:
  /// Links `waiter` with `waker`, or, already linked, keeps the waker of
  /// this poll (rule 2: will_wake first).
  void wait(ListedWaiter& waiter, const Waker& waker) {
    if (!waiter.queued) {
      waiter.waker = waker;
      waiter.queued = true;
      list_.push_back(waiter);
    } else if (!waiter.waker.will_wake(waker)) {
      waiter.waker = waker;
    }
  }

  /// Unlinks `waiter` if it is still linked (a future going away).
  void remove(ListedWaiter& waiter) noexcept {
    if (!waiter.queued) return;
    list_.erase(waiter);
    waiter.queued = false;
  }

  /// Unlinks every waiter and moves its waker into `wakes`; when `wakes`
  /// fills up, lets `held` go to wake that batch.
  void wake_all(Mutex& held, WakeList& wakes) noexcept POLLUX_REQUIRES(held) {
    while (!list_.empty()) {
      if (wakes.flush_if_full(held)) continue;
      ListedWaiter& waiter = list_.front();
      list_.pop_front();
      waiter.queued = false;
      wakes.push(std::move(waiter.waker));
    }
  }

 private:
  IntrusiveList<ListedWaiter, &ListedWaiter::hook> list_;
};

/// A future whose node waits in a WaiterList that `Owner` guards (a
/// broadcast or watch receiver): each poll is `(owner.*PollWith)(cx, node)`;
/// after a Pending poll the node's address is known, so the future no
/// longer moves (rule 4), and its destructor takes the owner's lock to
/// unlink the node (`queued` may be cleared by a waker of the list at any
/// moment, so it is only read under that lock).
template <class Owner, class Out, Poll<Out> (Owner::*PollWith)(Context&, ListedWaiter&),
          void (Owner::*Unlink)(ListedWaiter&) noexcept>
class [[nodiscard("futures do nothing unless polled")]] ListedFuture {
 public:
  using Output = Out;

  explicit ListedFuture(Owner & owner) noexcept : owner_(&owner) {}
  ListedFuture(ListedFuture && other) noexcept : owner_(other.owner_), pin_(std::move(other.pin_)) {}
  ListedFuture& operator=(ListedFuture&&) = delete;
  ~ListedFuture() {
    if (waited_) (owner_->*Unlink)(node_);
  }

  /// Pending until it completes, with the waker of this poll stored (rule 2).
  Poll<Out> poll(Context & cx) {
    Poll<Out> result = (owner_->*PollWith)(cx, node_);
    if (result.is_pending()) {
      waited_ = true;
      pin_.pin();
    }
    return result;
  }

 private:
  Owner* owner_;
  ListedWaiter node_;
  bool waited_ = false;
  [[no_unique_address]] PinCheck<ListedFuture> pin_;
};

}  // namespace pollux::detail
