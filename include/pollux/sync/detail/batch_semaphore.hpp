// BatchSemaphore: the fair semaphore under Semaphore, Mutex and RwLock. An
// acquire of n permits is a future that embeds its own waiter node; it
// links the node into a FIFO list on its first Pending poll (no allocation
// per wait) and unlinks it in its destructor (rule 5). Released permits go
// to the waiter at the head first, even partly, and only what no waiter
// wants goes back to the free count: nobody barges past a waiter, and a
// large request at the head is not overtaken by small ones.
//
// Uncontended, an acquire and a release are one compare-and-swap each on
// one word; the list's lock is taken only when someone waits. Wakers are
// collected under the lock and woken after it (WakeList).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string_view>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/intrusive_list.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/detail/pin_check.hpp"
#include "pollux/core/result.hpp"

namespace pollux::detail {

class BatchSemaphore {
 public:
  /// The most permits a semaphore can hold: the word keeps two flag bits
  /// below the count, and the count a bit of headroom, so that releasing
  /// up to this many on top of this many cannot overflow it.
  static constexpr std::size_t kMaxPermits = SIZE_MAX >> 3;

  /// The node an acquiring future embeds. `remaining` is what it still
  /// needs; the semaphore sets it to 0 (granted) or kClosedMark (closed)
  /// when it unlinks the node, with release order, so the owner can read it
  /// without the lock. `waker` and the link are touched only under the lock.
  struct Waiter {
    static constexpr std::size_t kClosedMark = SIZE_MAX;
    explicit Waiter(std::size_t needed) noexcept : needed(needed), remaining(needed) {}
    ListHook<Waiter> hook;
    OwnerGuarded<Waker> waker;
    std::size_t needed;
    Atomic<std::size_t> remaining;
    /// The node was linked (it may have been unlinked since, granted or
    /// closed). Read and written by the owner's polls and destructor only.
    bool queued = false;
  };

  explicit BatchSemaphore(std::size_t permits);
  BatchSemaphore(const BatchSemaphore&) = delete;
  // Debug builds: stops with `owner` named when a waiter is still queued,
  // for the destructors of the types built on this one.
  void check_no_waiters([[maybe_unused]] std::string_view owner) const noexcept {
    if constexpr (check_contract) {
      if (word_.load(std::memory_order_acquire) & kWaiters) {
        contract_violation(
            owner,
            "destroyed while a task still waits on it (its waiting future would touch freed memory): declare it before the runtime, so the runtime and its tasks go first");
      }
    }
  }
  BatchSemaphore& operator=(const BatchSemaphore&) = delete;

  /// Takes n permits now, or says why not. Fails while anyone waits, even
  /// if enough permits are free: they are promised to the waiters.
  std::optional<TryAcquireError> try_acquire(std::size_t n) noexcept {
    // Acquire, on a failure too: a caller told "closed" may read what the
    // closer published before close() (OnceCell's value). A relaxed load
    // let that read come before the closed bit's (the model checker's
    // once_cell test read no value there).
    Word word = word_.load(std::memory_order_acquire);
    for (;;) {
      TakeNow next = try_take(word, n);
      if (next.error) return next.error;
      if (word_.compare_exchange_weak(word, next.word, std::memory_order_acquire, std::memory_order_acquire)) {
        return std::nullopt;
      }
    }
  }

  /// Gives n permits back: to the waiters first, in order, then to the free
  /// count. Wakes the waiters it completes, after its lock is released.
  void release(std::size_t n) noexcept {
    if (n == 0) return;
    // Someone waits: straight to the waiters, under the lock.
    if (word_.load(std::memory_order_relaxed) & kWaiters) return release_to_waiters(n);
    // Else one fetch_add. If a waiter queued meanwhile the permits only
    // pass through the word: the lock holder moves them on to the waiters.
    if (word_.fetch_add(n << kShift, std::memory_order_release) & kWaiters) release_to_waiters(0);
  }

  /// Polls an acquire whose node is `waiter`. Until the node is queued the
  /// owner has just tried try_acquire and got NoPermits. Ready(true): the
  /// permits are the owner's; Ready(false): the semaphore is closed.
  Poll<bool> poll_acquire(Context& cx, Waiter& waiter);

  /// The destructor of an acquire whose node was queued: unlinks it if it
  /// still is, and gives back whatever it was granted (all of it, or a part
  /// while queued).
  void cancel(Waiter& waiter) noexcept;

  /// Closes the semaphore: every waiter and every later acquire fails.
  /// Permits held stay valid and may still be released.
  void close() noexcept;

  std::size_t available() const noexcept { return word_.load(std::memory_order_acquire) >> kShift; }
  bool is_closed() const noexcept { return word_.load(std::memory_order_acquire) & kClosed; }

 private:
  // The word:
  //
  //   bit 0   CLOSED   close() was called; every acquire fails from then on
  //   bit 1   WAITERS  the wait list is not empty (set and cleared only
  //                    under the lock, together with the list)
  //   bits 2+ PERMITS  free permits. While WAITERS is set they are only
  //                    passing through: nobody but the lock holder takes
  //                    them, and it hands them to the waiters
  //
  // Transitions:
  //   try_take       PERMITS -= n            when !CLOSED, !WAITERS, PERMITS >= n
  //   release        PERMITS += n            (no lock); if WAITERS was set, then
  //                                           under the lock: PERMITS = 0, handed to
  //                                           the waiters, the rest back to PERMITS
  //                                           and WAITERS cleared if the list emptied
  //   take_or_queue  PERMITS -= n, or        (under the lock) take n when enough
  //                  PERMITS = 0, +WAITERS     and nobody waits; else take all and
  //                                           queue; behind other waiters, take none
  //   close          +CLOSED
  using Word = std::size_t;
  static constexpr Word kClosed = 1;
  static constexpr Word kWaiters = 2;
  static constexpr unsigned kShift = 2;

  struct TakeNow {
    Word word;
    std::optional<TryAcquireError> error;
  };
  static TakeNow try_take(Word word, std::size_t n) noexcept {
    if (word & kClosed) return {word, TryAcquireError::Closed};
    if ((word & kWaiters) || (word >> kShift) < n) return {word, TryAcquireError::NoPermits};
    return {word - (n << kShift), std::nullopt};
  }

  using List = IntrusiveList<Waiter, &Waiter::hook>;

  // Hands n permits, and those passing through the word, to the waiters.
  void release_to_waiters(std::size_t n) noexcept;
  // Under the lock: PERMITS = 0; returns what was there.
  std::size_t take_all_locked() noexcept POLLUX_REQUIRES(lock_);
  // Under the lock: hands n permits to the waiters from the head on, moves
  // the wakers of those it completes into `wakes`, and returns what is left
  // when `wakes` filled up (the caller wakes, relocks and calls again).
  std::size_t assign_locked(std::size_t n, class WakeList& wakes) noexcept POLLUX_REQUIRES(lock_);

  Atomic<Word> word_;
  Mutex lock_;
  List waiters_ POLLUX_GUARDED_BY(lock_);
};

/// The future of acquiring n permits from a BatchSemaphore: Ready(true)
/// with the permits, Ready(false) when the semaphore is closed. The public
/// acquire futures (Semaphore, Mutex, RwLock) wrap it.
/// Cancellation safety: destroying it loses no permits. Before its first
/// poll it holds nothing; while queued, what it was granted so far goes to
/// the next waiter; granted but not yet polled, it gives every permit back.
class [[nodiscard("futures do nothing unless polled")]] AcquireFuture {
 public:
  using Output = bool;

  AcquireFuture(BatchSemaphore & semaphore, std::size_t permits) noexcept : semaphore_(&semaphore), waiter_(permits) {}
  AcquireFuture(AcquireFuture && other) noexcept
      : semaphore_(other.semaphore_),
        waiter_(other.waiter_.needed),
        state_(other.state_),
        pin_(std::move(other.pin_)) {}
  AcquireFuture& operator=(AcquireFuture&&) = delete;
  ~AcquireFuture() {
    if (state_ == State::Waiting && waiter_.queued) semaphore_->cancel(waiter_);
  }

  Poll<bool> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(AcquireFuture, state_ == State::Waiting);
    if (!waiter_.queued) {  // the uncontended path, inline
      std::optional<TryAcquireError> error = semaphore_->try_acquire(waiter_.needed);
      if (!error || *error == TryAcquireError::Closed) {
        state_ = State::Done;
        return ready(!error);
      }
    }
    Poll<bool> result = semaphore_->poll_acquire(cx, waiter_);
    if (result.is_ready()) {
      state_ = State::Done;
    } else {
      pin_.pin();
    }
    return result;
  }

  std::size_t permits() const noexcept { return waiter_.needed; }

 private:
  enum class State { Waiting, Done };
  BatchSemaphore* semaphore_;
  BatchSemaphore::Waiter waiter_;
  State state_ = State::Waiting;
  [[no_unique_address]] PinCheck<AcquireFuture> pin_;
};

}  // namespace pollux::detail
