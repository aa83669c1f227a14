// RwLock<T>: many readers or one writer, across awaits. Fair (FIFO): a
// writer that waits is not overtaken by readers that come after it, so a
// stream of readers cannot starve it. It is a semaphore of kMaxReaders
// permits: a read takes one, a write takes them all (and, queued, keeps its
// place while readers ahead of it finish).
//
// Cancellation safety: destroying a read() or write() future never leaves
// the lock held, and a queued write that is destroyed passes on the
// permits it had gathered, so the readers behind it go on.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <optional>
#include <utility>

#include "pollux/sync/detail/batch_semaphore.hpp"

namespace pollux {

template <class T>
class RwLock;

/// Shared access to an RwLock's value; released when destroyed. Movable.
template <class T>
class [[nodiscard]] RwLockReadGuard {
 public:
  RwLockReadGuard(RwLockReadGuard&& other) noexcept : lock_(std::exchange(other.lock_, nullptr)) {}
  RwLockReadGuard& operator=(RwLockReadGuard&& other) noexcept {
    if (this != &other) {
      unlock();
      lock_ = std::exchange(other.lock_, nullptr);
    }
    return *this;
  }
  ~RwLockReadGuard() { unlock(); }

  /// The value this guard gives access to.
  const T& operator*() const noexcept { return lock_->value_; }
  /// The value this guard gives access to.
  const T* operator->() const noexcept { return &lock_->value_; }
  /// Releases the read lock now.
  void unlock() noexcept {
    if (lock_ != nullptr) std::exchange(lock_, nullptr)->semaphore_.release(1);
  }

 private:
  friend class RwLock<T>;
  explicit RwLockReadGuard(RwLock<T>& lock) noexcept : lock_(&lock) {}
  RwLock<T>* lock_;
};

/// Exclusive access to an RwLock's value; released when destroyed. Movable.
template <class T>
class [[nodiscard]] RwLockWriteGuard {
 public:
  RwLockWriteGuard(RwLockWriteGuard&& other) noexcept : lock_(std::exchange(other.lock_, nullptr)) {}
  RwLockWriteGuard& operator=(RwLockWriteGuard&& other) noexcept {
    if (this != &other) {
      unlock();
      lock_ = std::exchange(other.lock_, nullptr);
    }
    return *this;
  }
  ~RwLockWriteGuard() { unlock(); }

  /// The value this guard gives access to.
  T& operator*() const noexcept { return lock_->value_; }
  /// The value this guard gives access to.
  T* operator->() const noexcept { return &lock_->value_; }
  /// Releases the write lock now.
  void unlock() noexcept {
    if (lock_ != nullptr) std::exchange(lock_, nullptr)->semaphore_.release(RwLock<T>::kMaxReaders);
  }

 private:
  friend class RwLock<T>;
  explicit RwLockWriteGuard(RwLock<T>& lock) noexcept : lock_(&lock) {}
  RwLock<T>* lock_;
};

/// A value behind an asynchronous, fair reader-writer lock.
template <class T>
class RwLock {
 public:
  /// How many readers may hold the lock at once.
  static constexpr std::size_t kMaxReaders = std::size_t{1} << 30;

  /// A lock around `value`.
  explicit RwLock(T value = T()) : value_(std::move(value)) {}
  /// A lock around a T made from `args` in place.
  template <class... Args>
  explicit RwLock(std::in_place_t, Args&&... args) : value_(std::forward<Args>(args)...) {}
  RwLock(const RwLock&) = delete;
  RwLock& operator=(const RwLock&) = delete;
  /// Debug builds stop here, naming the type, if a task still waits on it.
  ~RwLock() { semaphore_.check_no_waiters(detail::type_name<RwLock>()); }

  /// The future of read(): Ready with a read guard.
  class [[nodiscard("futures do nothing unless polled")]] Read {
   public:
    using Output = RwLockReadGuard<T>;
    /// Pending until it completes, with the waker of this poll stored (rule 2).
    Poll<RwLockReadGuard<T>> poll(Context & cx) {
      if (inner_.poll(cx).is_pending()) return pending;
      return ready(RwLockReadGuard<T>(*lock_));
    }

   private:
    friend class RwLock;
    explicit Read(RwLock & lock) noexcept : lock_(&lock), inner_(lock.semaphore_, 1) {}
    RwLock* lock_;
    detail::AcquireFuture inner_;
  };

  /// The future of write(): Ready with a write guard.
  class [[nodiscard("futures do nothing unless polled")]] Write {
   public:
    using Output = RwLockWriteGuard<T>;
    /// Pending until it completes, with the waker of this poll stored (rule 2).
    Poll<RwLockWriteGuard<T>> poll(Context & cx) {
      if (inner_.poll(cx).is_pending()) return pending;
      return ready(RwLockWriteGuard<T>(*lock_));
    }

   private:
    friend class RwLock;
    explicit Write(RwLock & lock) noexcept : lock_(&lock), inner_(lock.semaphore_, kMaxReaders) {}
    RwLock* lock_;
    detail::AcquireFuture inner_;
  };

  /// Waits for shared access, behind every earlier waiter.
  Read read() noexcept { return Read(*this); }
  /// Waits for exclusive access, behind every earlier waiter.
  Write write() noexcept { return Write(*this); }
  /// Shared access now, or TryLockError (a writer holds it or someone waits).
  Result<RwLockReadGuard<T>, TryLockError> try_read() noexcept {
    if (semaphore_.try_acquire(1)) return TryLockError{};
    return RwLockReadGuard<T>(*this);
  }
  /// Exclusive access now, or TryLockError.
  Result<RwLockWriteGuard<T>, TryLockError> try_write() noexcept {
    if (semaphore_.try_acquire(kMaxReaders)) return TryLockError{};
    return RwLockWriteGuard<T>(*this);
  }
  /// The value, without locking: the caller has the only reference.
  T& get_mut() noexcept { return value_; }

 private:
  friend class RwLockReadGuard<T>;
  friend class RwLockWriteGuard<T>;
  detail::BatchSemaphore semaphore_{kMaxReaders};
  T value_;
};

}  // namespace pollux
