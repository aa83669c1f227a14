// TickTimer: the embedded profile's clock and timer queue, driven by a
// periodic interrupt (SysTick, or a board timer) at a rate the program
// sets. The handler calls tick(); sleeps waiting in the queue are kept in
// deadline order, so a tick with nothing due is one comparison, and each
// due sleep costs O(1) to wake. Its wakes run outside its critical
// sections (nothing is woken while a lock is held).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20
#include "pollux/embedded/detail/profile.hpp"

#include <chrono>
#include <cstdint>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/interrupts.hpp"
#include "pollux/core/detail/intrusive_list.hpp"
#include "pollux/core/waker.hpp"

namespace pollux {

class TickTimer;

namespace detail {

/// One sleep waiting in a TickTimer's queue. Linked, unlinked and its
/// waker moved only inside the timer's critical sections.
struct TickEntry {
  ListHook<TickEntry> hook;
  std::uint64_t deadline = 0;
  Waker waker;
  bool linked = false;
};

/// The timer that sleep() and timeout() use: the one started last.
inline constinit TickTimer* program_timer = nullptr;

}  // namespace detail

/// A clock counting ticks of a periodic interrupt, and the queue of the
/// sleeps that wait for them. Declare one (`constinit TickTimer timer(1000);`),
/// call start() before the first sleep, and call tick() from the interrupt.
class TickTimer {
 public:
  /// A timer whose interrupt comes `hz` times a second.
  explicit constexpr TickTimer(std::uint32_t hz) noexcept : hz_(hz) {}
  TickTimer(const TickTimer&) = delete;
  TickTimer& operator=(const TickTimer&) = delete;

  /// Makes this the timer of sleep() and timeout().
  void start() noexcept { detail::program_timer = this; }

  /// From the tick interrupt's handler: one tick more, and a wake for every
  /// sleep that came due.
  void tick() noexcept {
    {
      detail::InterruptGuard masked;
      ++now_;
    }
    for (;;) {
      Waker due;
      {
        detail::InterruptGuard masked;
        if (queue_.empty() || queue_.front().deadline > now_) return;
        detail::TickEntry& entry = queue_.pop_front();
        entry.linked = false;
        due = std::move(entry.waker);
      }
      std::move(due).wake();
    }
  }

  /// For a board's tick interrupt: tick() on the timer started last, if any.
  static void tick_started() noexcept;

  /// The ticks since the program started.
  std::uint64_t now() const noexcept {
    detail::InterruptGuard masked;  // a 64-bit read is two loads on a 32-bit core
    return now_;
  }

  /// The interrupt's rate.
  constexpr std::uint32_t hz() const noexcept { return hz_; }

  /// The ticks that cover `d`, rounded up (a sleep never ends early).
  template <class Rep, class Period>
  constexpr std::uint64_t ticks_for(std::chrono::duration<Rep, Period> d) const noexcept {
    auto us = std::chrono::ceil<std::chrono::microseconds>(d).count();
    if (us <= 0) return 0;
    return (static_cast<std::uint64_t>(us) * hz_ + 999'999) / 1'000'000;
  }

  /// Queues `entry` in deadline order with `waker`; false (nothing queued)
  /// when its deadline has passed. Ties keep their order of arrival.
  bool arm(detail::TickEntry& entry, const Waker& waker) noexcept {
    detail::InterruptGuard masked;
    if (entry.deadline <= now_) return false;
    entry.waker = waker;
    detail::TickEntry* after = queue_.empty() ? nullptr : &queue_.back();
    while (after != nullptr && after->deadline > entry.deadline) after = Queue::prev(*after);
    queue_.insert_after(after, entry);
    entry.linked = true;
    return true;
  }

  /// A queued entry's poll: true once it came due (it is unlinked then);
  /// else its waker is replaced by `waker` unless that wakes the same task.
  bool poll_armed(detail::TickEntry& entry, const Waker& waker) noexcept {
    detail::InterruptGuard masked;  // a task's waker clones and drops without waking: fine masked
    if (!entry.linked) return true;
    if (!entry.waker.will_wake(waker)) entry.waker = waker;
    return false;
  }

  /// Takes a queued entry out (a sleep destroyed before it came due).
  void cancel(detail::TickEntry& entry) noexcept {
    Waker dropped;  // dropped after the section
    detail::InterruptGuard masked;
    if (!entry.linked) return;
    queue_.erase(entry);
    entry.linked = false;
    dropped = std::move(entry.waker);
  }

 private:
  using Queue = detail::IntrusiveList<detail::TickEntry, &detail::TickEntry::hook>;

  std::uint32_t hz_;
  std::uint64_t now_ = 0;
  Queue queue_;  // by deadline, the earliest first; a new sleep is mostly due last
};

inline void TickTimer::tick_started() noexcept {
  if (TickTimer* timer = detail::program_timer) timer->tick();
}

}  // namespace pollux
