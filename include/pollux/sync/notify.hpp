// Notify: wakes tasks without sending them data, tokio's Notify. A task
// waits with `notified()`, a future of void; `notify_one()` completes the
// oldest waiter, or stores one permit for the next notified() when nobody
// waits, so a notification sent before the wait is not lost;
// `notify_waiters()` completes every notified() that exists when it is
// called (also one created but not yet polled) and stores nothing.
// Each notified() embeds its own waiter node (no allocation per wait) and
// stores the waker of its latest poll (rule 2); thread-safe, and nothing is
// woken while the list's lock is held.
//
// Cancellation safety: destroying a notified() loses nothing. One that
// notify_one chose but that was destroyed before it saw the notification
// passes it on to the next waiter, or back as the stored permit.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>
#include <mutex>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/intrusive_list.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/detail/pin_check.hpp"

namespace pollux {

/// Wakes tasks without sending them data, tokio's Notify.
class Notify {
  // A waiter's node, embedded in its Notified future; `notification` says
  // which call unlinked it.
  enum class Notification : std::uint8_t { None, One, All };
  struct Waiter {
    detail::ListHook<Waiter> hook;
    detail::OwnerGuarded<Waker> waker;                              // under the Notify's lock
    detail::OwnerGuarded<std::uintptr_t> calls;                     // CALLS when it queued, under the Notify's lock
    detail::Atomic<Notification> notification{Notification::None};  // set (release) when unlinked
    // What `waker` holds, as the polling side stored it: only that side
    // writes or reads this, so a poll can compare without the lock.
    RawWaker stored{};
  };
  using List = detail::IntrusiveList<Waiter, &Waiter::hook>;

 public:
  Notify() = default;
  Notify(const Notify&) = delete;
  Notify& operator=(const Notify&) = delete;
  /// Debug builds stop here, naming the type, if a task still waits on it.
  ~Notify() {
    if constexpr (detail::check_contract) {
      if ((state_.load(std::memory_order_acquire) & kStateMask) == kWaiting) {
        detail::contract_violation(
            detail::type_name<Notify>(),
            "destroyed while a task still waits on it (its waiting future would touch freed memory): declare it before the runtime, so the runtime and its tasks go first");
      }
    }
  }

  /// The future of notified(): Ready once this waiter was notified.
  class [[nodiscard("futures do nothing unless polled")]] Notified {
   public:
    using Output = void;

    Notified(Notified && other) noexcept
        : notify_(other.notify_), calls_(other.calls_), state_(other.state_), pin_(std::move(other.pin_)) {
      other.state_ = State::Done;
    }
    Notified& operator=(Notified&&) = delete;
    ~Notified() {
      if (state_ == State::Waiting) notify_->cancel(waiter_);
    }

    /// Pending until it completes, with the waker of this poll stored (rule 2).
    Poll<void> poll(Context & cx) {
      POLLUX_CHECK_NOT_DONE(Notified, state_ != State::Done);
      bool done = state_ == State::Init ? notify_->poll_first(cx, waiter_, calls_) : notify_->poll_again(cx, waiter_);
      if (done) {
        state_ = State::Done;
        return ready();
      }
      state_ = State::Waiting;
      pin_.pin();
      return pending;
    }

   private:
    friend class Notify;
    enum class State { Init, Waiting, Done };
    Notified(Notify & notify, std::uintptr_t calls) noexcept : notify_(&notify), calls_(calls) {}

    Notify* notify_;
    std::uintptr_t calls_;  // notify_waiters() calls when this was created
    Waiter waiter_;
    State state_ = State::Init;
    [[no_unique_address]] detail::PinCheck<Notified> pin_;
  };

  /// A future that completes on the next notify_one() that picks it (or a
  /// permit stored before), or on any notify_waiters() called after this.
  Notified notified() noexcept { return Notified(*this, state_.load(std::memory_order_acquire) >> kCallsShift); }

  /// Completes the oldest waiting notified(); with none waiting, stores one
  /// permit (at most one) for the next notified() to take at once.
  void notify_one() noexcept {
    Word word = state_.load(std::memory_order_relaxed);
    while ((word & kStateMask) != kWaiting) {
      // EMPTY or NOTIFIED -> NOTIFIED, without the lock.
      if (state_.compare_exchange_weak(word, (word & ~kStateMask) | kNotified, std::memory_order_release,
                                       std::memory_order_relaxed)) {
        return;
      }
    }
    notify_one_slow();
  }

  /// Completes every notified() created before this call; stores no permit.
  void notify_waiters() noexcept;

 private:
  // The state word:
  //
  //   bits 0-1  EMPTY (0)     nobody waits, no permit
  //             WAITING (1)   the list is not empty (changed only under the lock)
  //             NOTIFIED (2)  a permit is stored for the next notified()
  //   bits 2+   CALLS         how many times notify_waiters() ran
  //
  // Transitions:
  //   notify_one      EMPTY/NOTIFIED -> NOTIFIED     (no lock)
  //                   WAITING -> WAITING or EMPTY    (lock: pops the oldest waiter)
  //   take permit     NOTIFIED -> EMPTY              (no lock, a notified()'s first poll)
  //   queue           EMPTY -> WAITING               (lock)
  //   notify_waiters  CALLS + 1, WAITING -> EMPTY    (lock)
  using Word = std::uintptr_t;
  static constexpr Word kEmpty = 0;
  static constexpr Word kWaiting = 1;
  static constexpr Word kNotified = 2;
  static constexpr Word kStateMask = 3;
  static constexpr unsigned kCallsShift = 2;

  bool poll_first(Context& cx, Waiter& waiter, std::uintptr_t calls);
  // A queued waiter polled again: true once it was notified. Without the
  // lock when nothing changed (not notified, the same waker as stored): a
  // notify that took the stored waker between the two looks is waking
  // this very task, so Pending is right (a future in a select is polled
  // on every wake of its task, most of them for its siblings).
  bool poll_again(Context& cx, Waiter& waiter) {
    if (waiter.notification.load(std::memory_order_acquire) != Notification::None) return true;
    const RawWaker& now = cx.waker().as_raw();
    if (waiter.stored.data == now.data && waiter.stored.vtable == now.vtable) return false;
    return poll_again_locked(cx, waiter);
  }
  bool poll_again_locked(Context& cx, Waiter& waiter);
  void cancel(Waiter& waiter) noexcept;
  void notify_one_slow() noexcept;
  Waker notify_one_locked() noexcept POLLUX_REQUIRES(lock_);

  detail::Atomic<Word> state_{kEmpty};
  detail::Mutex lock_;
  List waiters_ POLLUX_GUARDED_BY(lock_);
};

}  // namespace pollux
