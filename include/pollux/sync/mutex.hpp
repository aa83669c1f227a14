// Mutex<T>: a value that one task at a time may use, across awaits. lock()
// is a future of a MutexGuard that unlocks when destroyed. Fair (FIFO): an
// unlock hands the lock to the oldest waiter at once, so a try_lock made
// before that waiter runs fails. A semaphore of one permit underneath: an
// uncontended lock and unlock cost one compare-and-swap each.
//
// Cancellation safety: destroying a lock() future never leaves the mutex
// locked: one granted the lock but never polled again unlocks it.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/sync/detail/batch_semaphore.hpp"

namespace pollux {

template <class T>
class Mutex;

/// Access to a Mutex's value; unlocks when destroyed. Movable.
template <class T>
class [[nodiscard]] MutexGuard {
 public:
  MutexGuard(MutexGuard&& other) noexcept : mutex_(std::exchange(other.mutex_, nullptr)) {}
  MutexGuard& operator=(MutexGuard&& other) noexcept {
    if (this != &other) {
      unlock();
      mutex_ = std::exchange(other.mutex_, nullptr);
    }
    return *this;
  }
  ~MutexGuard() { unlock(); }

  /// The value this guard gives access to.
  T& operator*() const noexcept { return mutex_->value_; }
  /// The value this guard gives access to.
  T* operator->() const noexcept { return &mutex_->value_; }

  /// Unlocks now (the guard then holds nothing).
  void unlock() noexcept {
    if (mutex_ != nullptr) std::exchange(mutex_, nullptr)->semaphore_.release(1);
  }

 private:
  friend class Mutex<T>;
  explicit MutexGuard(Mutex<T>& mutex) noexcept : mutex_(&mutex) {}
  Mutex<T>* mutex_;
};

/// A value behind an asynchronous, fair lock.
template <class T>
class Mutex {
 public:
  /// A mutex holding `value`.
  explicit Mutex(T value = T()) : value_(std::move(value)) {}
  /// A mutex holding T(args...).
  template <class... Args>
  explicit Mutex(std::in_place_t, Args&&... args) : value_(std::forward<Args>(args)...) {}
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;
  /// Debug builds stop here, naming the type, if a task still waits on it.
  ~Mutex() { semaphore_.check_no_waiters(detail::type_name<Mutex>()); }

  /// The future of lock(): Ready with the guard, in FIFO order.
  class [[nodiscard("futures do nothing unless polled")]] Lock {
   public:
    using Output = MutexGuard<T>;
    /// Pending until it completes, with the waker of this poll stored (rule 2).
    Poll<MutexGuard<T>> poll(Context & cx) {
      if (inner_.poll(cx).is_pending()) return pending;  // never closed
      return ready(MutexGuard<T>(*mutex_));
    }

   private:
    friend class Mutex;
    explicit Lock(Mutex & mutex) noexcept : mutex_(&mutex), inner_(mutex.semaphore_, 1) {}
    Mutex* mutex_;
    detail::AcquireFuture inner_;
  };

  /// Waits for the lock.
  Lock lock() noexcept { return Lock(*this); }
  /// The lock now, or TryLockError when it is held or others wait for it.
  Result<MutexGuard<T>, TryLockError> try_lock() noexcept {
    if (semaphore_.try_acquire(1)) return TryLockError{};
    return MutexGuard<T>(*this);
  }
  /// The value, without locking: the caller has the only reference.
  T& get_mut() noexcept { return value_; }

 private:
  friend class MutexGuard<T>;
  detail::BatchSemaphore semaphore_{1};
  T value_;
};

}  // namespace pollux
