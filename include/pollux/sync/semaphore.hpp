// Semaphore: a count of permits that tasks acquire and give back, fair
// (FIFO): a waiter is served before any later acquire, and a request for
// many permits at the head is not overtaken by small ones. acquire() is a
// future with its own waiter node (no allocation per wait); an uncontended
// acquire and release cost one atomic compare-and-swap each. Thread-safe;
// wakers are woken after the semaphore's lock is released (rule 6).
//
// Cancellation safety: destroying an acquire() future loses no permits,
// whatever state it is in (see detail::AcquireFuture).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <stdexcept>
#include <utility>

#include "pollux/core/panic.hpp"
#include "pollux/core/result.hpp"
#include "pollux/sync/detail/batch_semaphore.hpp"

namespace pollux {

class Semaphore;

/// Permits held from a Semaphore; gives them back when destroyed (or when
/// release() is called), unless forget() was called. Movable.
class [[nodiscard]] SemaphorePermit {
 public:
  SemaphorePermit(SemaphorePermit&& other) noexcept
      : semaphore_(std::exchange(other.semaphore_, nullptr)), permits_(std::exchange(other.permits_, 0)) {}
  SemaphorePermit& operator=(SemaphorePermit&& other) noexcept {
    if (this != &other) {
      release();
      semaphore_ = std::exchange(other.semaphore_, nullptr);
      permits_ = std::exchange(other.permits_, 0);
    }
    return *this;
  }
  ~SemaphorePermit() { release(); }

  /// How many permits this holds.
  std::size_t num_permits() const noexcept { return permits_; }
  /// Keeps the permits out of the semaphore for good (it shrinks by them).
  void forget() noexcept {
    semaphore_ = nullptr;
    permits_ = 0;
  }
  /// Gives the permits back now.
  void release() noexcept;

 private:
  friend class Semaphore;
  SemaphorePermit(detail::BatchSemaphore& semaphore, std::size_t permits) noexcept
      : semaphore_(&semaphore), permits_(permits) {}

  detail::BatchSemaphore* semaphore_;
  std::size_t permits_;
};

/// A count of permits that tasks acquire and give back, fair (FIFO): a waiter is served before any
/// later acquire, and a request for many permits at the head is not overtaken by small ones.
class Semaphore {
 public:
  /// The most permits a Semaphore can hold.
  static constexpr std::size_t kMaxPermits = detail::BatchSemaphore::kMaxPermits;

  /// A semaphore with `permits` free permits. Throws std::invalid_argument
  /// above kMaxPermits (panics where exceptions are off).
  explicit Semaphore(std::size_t permits) : semaphore_(permits) {}
  Semaphore(const Semaphore&) = delete;
  Semaphore& operator=(const Semaphore&) = delete;
  /// Debug builds stop here, naming the type, if a task still waits on it.
  ~Semaphore() { semaphore_.check_no_waiters(detail::type_name<Semaphore>()); }

  /// The future of acquire()/acquire_many(): Ready with the permits, or
  /// with Closed once the semaphore is closed.
  class [[nodiscard("futures do nothing unless polled")]] Acquire {
   public:
    using Output = Result<SemaphorePermit, Closed>;
    /// Pending until it completes, with the waker of this poll stored (rule 2).
    Poll<Output> poll(Context & cx) {
      Poll<bool> acquired = inner_.poll(cx);
      if (acquired.is_pending()) return pending;
      if (!acquired.value()) return ready(Output(Closed{}));
      return ready(Output(SemaphorePermit(*semaphore_, inner_.permits())));
    }

   private:
    friend class Semaphore;
    Acquire(detail::BatchSemaphore & semaphore, std::size_t permits) noexcept
        : semaphore_(&semaphore), inner_(semaphore, permits) {}
    detail::BatchSemaphore* semaphore_;
    detail::AcquireFuture inner_;
  };

  /// Waits for one permit, in FIFO order with the other waiters.
  Acquire acquire() noexcept { return Acquire(semaphore_, 1); }
  /// Waits for k permits at once; the request keeps its place in the queue
  /// while permits trickle in. Throws std::invalid_argument above kMaxPermits
  /// (panics where exceptions are off).
  Acquire acquire_many(std::size_t k) {
    check(k);
    return Acquire(semaphore_, k);
  }

  /// One permit now, or NoPermits (also while others wait: they come first)
  /// or Closed.
  Result<SemaphorePermit, TryAcquireError> try_acquire() noexcept { return try_acquire_many(1); }
  /// k permits now, or NoPermits or Closed.
  Result<SemaphorePermit, TryAcquireError> try_acquire_many(std::size_t k) noexcept {
    if (auto error = semaphore_.try_acquire(k)) return *error;
    return SemaphorePermit(semaphore_, k);
  }

  /// Adds k permits (to the waiters first). Throws std::invalid_argument
  /// when the total would pass kMaxPermits (panics where exceptions are off).
  void add_permits(std::size_t k) {
    if (k > kMaxPermits - semaphore_.available()) {
      detail::raise<std::invalid_argument>("pollux::Semaphore::add_permits: more permits than Semaphore::kMaxPermits");
    }
    semaphore_.release(k);
  }

  /// Free permits now (0 while anyone waits).
  std::size_t available_permits() const noexcept { return semaphore_.available(); }

  /// Closes the semaphore: every waiting and every later acquire gets
  /// Closed, every try_acquire gets TryAcquireError::Closed. Permits held
  /// stay valid.
  void close() noexcept { semaphore_.close(); }
  /// True after close().
  bool is_closed() const noexcept { return semaphore_.is_closed(); }

 private:
  static void check(std::size_t k) {
    if (k > kMaxPermits)
      detail::raise<std::invalid_argument>("pollux::Semaphore::acquire_many: more than Semaphore::kMaxPermits");
  }

  detail::BatchSemaphore semaphore_;
};

inline void SemaphorePermit::release() noexcept {
  if (semaphore_ != nullptr) std::exchange(semaphore_, nullptr)->release(std::exchange(permits_, 0));
}

}  // namespace pollux
