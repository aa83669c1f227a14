// TimerEntry: one timer's node in the timer wheel. It lives inside the
// future that waits for it (Sleep, and through it Timeout and Interval), so
// arming a timer allocates nothing; insert and cancel are O(1) list
// operations. The TimerQueue links it while it is armed and unlinks it when it
// fires or is cancelled, under the queue's lock; `state` may be read
// without the lock, so a Sleep polled after its timer fired sees it at once.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/intrusive_list.hpp"
#include "pollux/core/waker.hpp"

namespace pollux::detail {

enum class TimerState : std::uint8_t {
  Idle,      // not linked: never armed, cancelled, or reset
  Armed,     // linked in the wheel; the driver will fire it
  Fired,     // the deadline passed: unlinked, its waker taken and woken
  Orphaned,  // its driver was destroyed while it was armed
};

struct TimerEntry {
  using Hook = ListHook<TimerEntry>;

  // Which of the wheel's lists holds the entry (the wheel's, which the
  // queue's lock guards, as it does `level` and `slot`).
  enum class List : std::uint8_t {
    None,        // not linked
    Wheel,       // a slot of the wheel: see level and slot
    Due,         // its tick has come, its deadline not yet
    Expired,     // its deadline passed; waiting to be fired
    Unresolved,  // armed with a delay: the driver has not read the clock for it yet
  };

  Hook hook;
  // When it fires. An entry armed with a delay (Sleep's FromFirstPoll,
  // TimerQueue::arm_after) carries the delay until the driver reads the
  // clock and turns it into the deadline; until then `list` is Unresolved
  // (or the entry is not armed yet) and delay_ns is the member in use.
  union {
    std::int64_t deadline_ns = 0;  // exact deadline, steady_clock nanoseconds
    std::int64_t delay_ns;         // a delay, counted from the driver's next look at the clock
  };
  std::uint64_t tick = 0;     // the millisecond tick of the deadline, as the wheel counts
  OwnerGuarded<Waker> waker;  // under the queue's lock
  // What `waker` held when the arming side (the Sleep) last stored it;
  // only that side writes or reads it, so its poll can see without the
  // lock that the waker need not change. Read it only after `state` said
  // Armed: a fire stores Fired before it wakes (and so may free) that waker.
  RawWaker stored{};
  Atomic<TimerState> state{TimerState::Idle};
  List list = List::None;
  std::uint8_t level = 0;  // with List::Wheel: the wheel level and the slot in it
  std::uint8_t slot = 0;

  // True when the waker stored at the last arm or refresh wakes the same
  // task as `now` (Waker::will_wake), so a refresh would change nothing.
  bool holds(const Waker& now) const noexcept {
    return stored.data == now.as_raw().data && stored.vtable == now.as_raw().vtable;
  }
};

}  // namespace pollux::detail
