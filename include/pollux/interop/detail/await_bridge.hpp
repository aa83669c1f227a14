// AwaitBridge: the wake side of a pollux future awaited in a foreign
// coroutine (pollux::awaitable). A waker's clones may outlive the awaiter
// (rule 6), so they point here, at a block with a reference count of its
// own; its state word decides, among the coroutine's thread and any number
// of waking threads, which one polls the future and which one resumes the
// coroutine, so that the future is never polled by two threads at once and
// the coroutine is resumed exactly once.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstdint>

#include "pollux/core/detail/concurrency.hpp"

namespace pollux::detail {

/// The state word and reference count behind an awaited future's wakers.
///
/// The word (one atomic operation per transition):
///
///     bit 0  kPolling    one thread polls the future (the coroutine's, or a waker's)
///     bit 1  kNotified   with kPolling: a wake came during that poll; poll again
///     bit 2  kDone       the future is finished, or its awaiter is gone: wakes do nothing
///     bit 3  kDetaching  with kPolling: the awaiter is being destroyed; the poll in
///                        flight must neither poll again nor resume the coroutine
///
///     0 (idle)          --wake--------> kPolling               the waker polls
///     kPolling          --wake--------> kPolling|kNotified     the poller polls again
///     kPolling          --pending-----> 0                      suspended until a wake
///     kPolling|kNotified--pending-----> kPolling               poll again
///     kPolling(|kNotified)--ready-----> kDone                  the poller resumes the coroutine
///     kPolling|kDetaching--pending/ready--> kDone              nobody resumes; the detacher is woken
///     0                 --detach------> kDone
///     kPolling          --detach------> kPolling|kDetaching    then waits for kDone
///
/// It starts at kPolling: the block is made during the coroutine's own
/// first poll, when the future first clones its waker.
class AwaitBridge {
 public:
  /// What a poller does after the transition that follows its poll.
  enum class Next : std::uint8_t {
    Suspend,  ///< the coroutine stays suspended; a later wake polls
    PollAgain,
    Resume,  ///< the future is done: resume the coroutine, exactly once
    Stop,    ///< the awaiter is going away: touch it no more
  };

  /// wake: true when the caller took the turn to poll (the word was idle).
  /// Any thread, any time, any number of times.
  bool wake() noexcept {
    std::int32_t seen = state_.load(std::memory_order_acquire);
    for (;;) {
      if (seen & kDone) return false;  // final: a load that sees it sees the truth
      // kNotified seen by a load may be stale: the poller may have cleared
      // it and polled again without this wake's event (store buffering:
      // our event then our load, against its clear then its look at the
      // event). Only a read-modify-write reads the newest word, so the wake
      // is dropped only on one (the model checker's first await_bridge
      // test resumed nothing without it).
      if (seen & kNotified) {
        if (state_.compare_exchange_weak(seen, seen, std::memory_order_acq_rel, std::memory_order_acquire))
          return false;
        continue;
      }
      std::int32_t next = (seen & kPolling) ? (seen | kNotified) : kPolling;
      if (state_.compare_exchange_weak(seen, next, std::memory_order_acq_rel, std::memory_order_acquire)) {
        return (seen & kPolling) == 0;
      }
    }
  }

  /// pending: the poller's future returned Pending. Precondition: the
  /// caller holds kPolling.
  Next pending() noexcept {
    std::int32_t seen = state_.load(std::memory_order_acquire);
    for (;;) {
      if (seen & kDetaching) return finish_detached();
      std::int32_t next = (seen & kNotified) ? kPolling : 0;
      if (state_.compare_exchange_weak(seen, next, std::memory_order_acq_rel, std::memory_order_acquire)) {
        return next == kPolling ? Next::PollAgain : Next::Suspend;
      }
    }
  }

  /// ready: the poller's future finished (its output or exception stored
  /// in the awaiter before this, released by it). Precondition: the caller
  /// holds kPolling.
  Next ready() noexcept {
    // Release only: it publishes the output to whoever destroys the frame
    // after kDone. The poller reads nothing another thread wrote from here
    // on: on kDetaching it only wakes the detacher.
    std::int32_t seen = state_.exchange(kDone, std::memory_order_release);
    if (seen & kDetaching) {
      detail::futex_wake_one(state_);
      return Next::Stop;
    }
    return Next::Resume;
  }

  /// detach: the awaiter is destroyed while the coroutine is suspended
  /// (its frame destroyed). Returns once no thread polls the future, and
  /// none ever will again; it may wait for one poll in flight.
  void detach() noexcept {
    std::int32_t seen = state_.load(std::memory_order_acquire);
    for (;;) {
      if (seen & kDone) return;
      std::int32_t next = (seen & kPolling) ? (seen | kDetaching) : kDone;
      if (state_.compare_exchange_weak(seen, next, std::memory_order_acq_rel, std::memory_order_acquire)) break;
    }
    if ((seen & kPolling) == 0) return;
    for (std::int32_t now = state_.load(std::memory_order_acquire); (now & kDone) == 0;
         now = state_.load(std::memory_order_acquire)) {
      detail::futex_wait(state_, now);
    }
  }

  /// True once the future finished or the awaiter detached.
  bool done() const noexcept { return (state_.load(std::memory_order_acquire) & kDone) != 0; }

  /// Adds a reference (a waker's clone).
  void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  /// Drops a reference: true when it was the last, and the caller frees the block.
  bool release() noexcept { return refs_.fetch_sub(1, std::memory_order_acq_rel) == 1; }

 private:
  static constexpr std::int32_t kPolling = 1;
  static constexpr std::int32_t kNotified = 2;
  static constexpr std::int32_t kDone = 4;
  static constexpr std::int32_t kDetaching = 8;

  Next finish_detached() noexcept {
    state_.store(kDone, std::memory_order_release);
    detail::futex_wake_one(state_);
    return Next::Stop;
  }

  Atomic<std::int32_t> state_{kPolling};
  Atomic<std::uint32_t> refs_{1};  // the awaiter's own
};

}  // namespace pollux::detail
