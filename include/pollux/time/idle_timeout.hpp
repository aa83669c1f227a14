// idle_timeout(d, f): f's output in a Result, or Elapsed once f has made no
// progress for `d`: the deadline of a connection that may live for hours
// as long as it keeps doing something, and must go once it stops (a
// client that went silent, or one that never reads what it is sent, so
// that the connection's writer waits for ever). f is then destroyed, which
// cancels it (rule 5).
//
// Progress is a wake of f: something f waits on (a socket, a channel, a
// timer of its own) became ready. f is polled with a waker of its own that
// marks activity before it wakes the task, so a wake that arrives in the
// same poll as the idle timer still counts: the timer firing does not hide
// it. A connection blocked on a peer that neither sends nor reads is never
// woken, so it is idle. The timer is re-armed lazily, when it fires, not at
// every wake, so a busy connection costs no timer work per wake.
//
// idle_timeout(d, f, keep_alive) asks keep_alive() when the limit passes:
// true keeps f as if it had just been woken, for a connection that is
// rightly quiet (a subscriber waiting for messages, as redis-server keeps
// one). It is called from the poll, on f's task, so it may read f's state.
//
// It allocates once, at the first poll: the small shared cell behind f's
// waker, which may outlive the IdleTimeout (rule 6).
//
// Cancellation safety: that of f; dropping an IdleTimeout drops f.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <optional>
#include <type_traits>
#include <utility>

#include "pollux/core/atomic_waker.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/result.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/time/elapsed.hpp"
#include "pollux/time/sleep.hpp"

namespace pollux {

namespace detail {

// What f's waker points at: a wake sets `woken`, then wakes the task
// through the waker its latest poll registered.
struct IdleActivity : RefCounted<IdleActivity> {
  Atomic<bool> woken{false};
  AtomicWaker task;  // the waker of the IdleTimeout's latest poll

  void wake() noexcept {
    woken.store(true, std::memory_order_release);  // before the wake: the poll it causes sees it
    task.wake_by_ref();
  }
};

}  // namespace detail

/// The keep_alive of an idle_timeout that has none: never.
struct NeverKeepAlive {
  /// False: an idle future ends.
  bool operator()() const noexcept { return false; }
};

/// What idle_timeout(d, f) returns: f's output, or Elapsed once f went `d`
/// without being woken (f is then destroyed), unless KeepAlive says to
/// keep it.
template <Future F, class KeepAlive = NeverKeepAlive>
class [[nodiscard("futures do nothing unless polled")]] IdleTimeout {
 public:
  using Output = Result<unit_if_void_t<output_t<F>>, Elapsed>;

  /// What idle_timeout(limit, f, keep_alive) makes: the time counts from
  /// the first poll.
  IdleTimeout(F inner, Duration limit, KeepAlive keep_alive = {})
      : inner_(std::move(inner)),
        keep_alive_(std::move(keep_alive)),
        limit_(limit),
        timer_(Sleep::FromFirstPoll{}, limit) {}

  /// f's output if Ready; Elapsed once `limit` passed since f was last woken.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(IdleTimeout, state_ != State::Done);
    if (state_ == State::Unpolled) {
      activity_ = make_arc<detail::IdleActivity>();
      inner_waker_.emplace(waker_from(activity_));
      last_active_ = now();
      state_ = State::Running;
    } else if (activity_->woken.exchange(false, std::memory_order_acquire)) {
      last_active_ = now();
    }
    activity_->task.register_waker(cx.waker());
    Context inner_cx(*inner_waker_);
    if (auto result = poll_unit(inner_, inner_cx); result.is_ready()) {
      state_ = State::Done;
      return Poll<Output>(std::in_place, std::move(result).value());
    }
    // The timer fired: idle only if no wake came since it was armed.
    while (timer_.poll(cx).is_ready()) {
      if (now() - last_active_ >= limit_ && keep_alive_()) last_active_ = now();
      if (now() - last_active_ >= limit_) {
        state_ = State::Done;
        return Poll<Output>(std::in_place, Elapsed{});
      }
      timer_.reset(last_active_ + limit_);
    }
    return pending;
  }

  /// The idle limit.
  Duration limit() const noexcept { return limit_; }

 private:
  enum class State { Unpolled, Running, Done };

  F inner_;
  KeepAlive keep_alive_;
  Duration limit_;
  Sleep timer_;
  Instant last_active_{};
  Arc<detail::IdleActivity> activity_;  // from the first poll
  std::optional<Waker> inner_waker_;    // f's waker, over activity_
  State state_ = State::Unpolled;
};

/// `future`'s output, or Elapsed once it has gone `limit` without being
/// woken (counted from its first poll, then from its latest wake).
template <Future F>
IdleTimeout<F> idle_timeout(Duration limit, F future) {
  return IdleTimeout<F>(std::move(future), limit);
}

/// As idle_timeout(limit, future), but when the limit passes, `keep_alive()`
/// is asked first: true keeps the future, as if it had just been woken.
template <Future F, class KeepAlive>
requires std::is_invocable_r_v<bool, KeepAlive&> IdleTimeout<F, KeepAlive> idle_timeout(Duration limit, F future,
                                                                                        KeepAlive keep_alive) {
  return IdleTimeout<F, KeepAlive>(std::move(future), limit, std::move(keep_alive));
}

}  // namespace pollux
