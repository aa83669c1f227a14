// TimerEntry: one timer's node in the timer wheel. It lives inside the
// future that waits for it (Sleep, and through it Timeout and Interval), so
// arming a timer allocates nothing; insert and cancel are O(1) list
// operations. The driver links it while it is armed and unlinks it when it
// fires or is cancelled, under the driver's lock; `state` may be read
// without the lock, so a Sleep polled after its timer fired sees it at once.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <atomic>
#include <cstdint>

#include <boost/intrusive/list_hook.hpp>

#include "pollux/core/waker.hpp"

namespace pollux::detail {

enum class TimerState : std::uint8_t {
  Idle,        // not linked: never armed, cancelled, or reset
  Armed,       // linked in the wheel; the driver will fire it
  Fired,       // the deadline passed: unlinked, its waker taken and woken
  Orphaned,    // its driver was destroyed while it was armed
};

struct TimerEntry {
  using Hook = boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::normal_link>>;

  Hook hook;
  std::int64_t deadline_ns = 0;  // exact deadline, steady_clock nanoseconds
  std::uint64_t tick = 0;        // the millisecond tick of the deadline, as the wheel counts
  Waker waker;                   // guarded by the driver's lock
  std::atomic<TimerState> state{TimerState::Idle};
  std::uint8_t level = 0;        // where the wheel linked it (see TimerWheel)
  std::uint8_t slot = 0;
};

}  // namespace pollux::detail
