// The concurrency vocabulary of every layer: Atomic, Mutex (annotated for
// Clang's thread-safety analysis), a futex wait on an Atomic word, a spin
// hint, and Counter for statistics. Nothing else in the library names
// std::atomic or std::mutex directly.
// They compile to the standard types; in a model build (POLLUX_MODEL, tests
// only) to the model checker's, which explores every interleaving of the
// library's real protocols at these operations (tests/support/model.hpp);
// in the single-core profile (POLLUX_SINGLE_CORE, a microcontroller) to
// interrupt masking where the core has no atomic instruction for the type,
// and there is no futex and no CondVar: nothing on one core can wait for
// another thread.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <atomic>
#include <chrono>
#include <cstdint>
#include <type_traits>
#include <utility>

#if defined(POLLUX_SINGLE_CORE)
#include "pollux/core/detail/interrupts.hpp"
#else
#include <condition_variable>  // std::cv_status
#include <mutex>
#endif

#if defined(POLLUX_MODEL)
#include <model.hpp>  // the model builds put tests/support/ on the include path
#endif

// Clang's thread-safety attributes: with -Wthread-safety, Clang checks at
// compile time that every field marked POLLUX_GUARDED_BY(m) is touched only
// with `m` held. Other compilers see plain declarations.
#if defined(__clang__)
#define POLLUX_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define POLLUX_THREAD_ANNOTATION(x)
#endif

#define POLLUX_CAPABILITY(name) POLLUX_THREAD_ANNOTATION(capability(name))
#define POLLUX_SCOPED_CAPABILITY POLLUX_THREAD_ANNOTATION(scoped_lockable)
#define POLLUX_GUARDED_BY(m) POLLUX_THREAD_ANNOTATION(guarded_by(m))
#define POLLUX_REQUIRES(...) POLLUX_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// A condition variable's wait lets its lock go and takes it again, which
// the analysis cannot follow (it does not look into the standard's either).
#define POLLUX_NO_THREAD_SAFETY_ANALYSIS POLLUX_THREAD_ANNOTATION(no_thread_safety_analysis)
#define POLLUX_ACQUIRE(...) POLLUX_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define POLLUX_RELEASE(...) POLLUX_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define POLLUX_EXCLUDES(...) POLLUX_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

namespace pollux::detail {

#if defined(POLLUX_MODEL)

/// True in a model build, where a structure sized for throughput may be
/// made small (the io_uring ring's provided buffers): the checker runs it
/// thousands of times, and the protocol is the same at any size.
inline constexpr bool kModelBuild = true;

template <class T>
using Atomic = ::model::Atomic<T>;
using RawMutex = ::model::Mutex;
using CondVar = ::model::CondVar;

inline void spin_hint() noexcept { ::model::spin(); }
inline void futex_wait(Atomic<std::int32_t>& word, std::int32_t expected) noexcept {
  ::model::futex_wait(word, expected);
}
inline void futex_wake_one(Atomic<std::int32_t>& word) noexcept { ::model::futex_wake_one(word); }

#elif defined(POLLUX_SINGLE_CORE)

/// True in a model build (tests only); this is the single-core profile.
inline constexpr bool kModelBuild = false;

/// The library's atomic type on one core: std::atomic where the core
/// updates T in one exclusive load/store pair (LDREX/STREX), else a short
/// critical section per operation (GuardedAtomic: 64-bit counters).
template <class T>
using Atomic = std::conditional_t<std::atomic<T>::is_always_lock_free, std::atomic<T>, GuardedAtomic<T> >;

/// Nothing to wait for in a spin on one core: nobody else runs meanwhile.
inline void spin_hint() noexcept {}

/// The mutex of the single-core profile: holding it masks interrupts, so
/// neither the code it interrupts nor another handler can hold it at the
/// same time. Hold it for a few instructions only: interrupts wait.
class InterruptMutex {
 public:
  /// Masks interrupts, keeping the mask it found for unlock.
  void lock() noexcept { saved_ = mask_interrupts(); }
  /// Always succeeds: on one core nobody else can hold it while we run.
  bool try_lock() noexcept {
    lock();
    return true;
  }
  /// Puts back the mask lock() found.
  void unlock() noexcept { restore_interrupts(saved_); }

 private:
  std::uint32_t saved_ = 0;
};

/// The mutex under Mutex in the single-core profile.
using RawMutex = InterruptMutex;

#else

/// True in a model build (tests only), where a structure sized for
/// throughput may be made small: the checker runs it thousands of times.
inline constexpr bool kModelBuild = false;

/// The library's atomic type: std::atomic, or the model checker's in a model build.
template <class T>
using Atomic = std::atomic<T>;

/// The pause of a spin loop's iteration (in a model build: wait until
/// another thread wrote something).
inline void spin_hint() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// Sleeps while `word` holds `expected`, until futex_wake_one. It may also
/// return spuriously (a signal, or a wake meant for an earlier wait): the
/// caller re-checks its state in every case.
void futex_wait(Atomic<std::int32_t>& word, std::int32_t expected) noexcept;
/// Wakes one thread sleeping in futex_wait on `word`, if any.
void futex_wake_one(Atomic<std::int32_t>& word) noexcept;

#endif

#if !defined(POLLUX_SINGLE_CORE)
/// A mutex on one futex word, after Drepper's "Futexes Are Tricky"
/// (mutex 3): an uncontended lock is one compare-exchange and an unlock one
/// exchange, both inline; only a lock that has to wait, and the unlock
/// that ends such a wait, enter the kernel. glibc's pthread_mutex_lock and
/// unlock cost about 70 instructions a pair before they reach the same
/// compare-exchange, and the library takes a lock on every I/O readiness,
/// timer refresh and Notify poll.
///
/// The word, and its transitions (each is one atomic operation):
///
///     kUnlocked (0) --lock--------> kLocked (1)      a compare-exchange: free only
///     any           --contend-----> kContended (2)   an exchange: a locker that has
///                                                    to wait says so before sleeping;
///                                                    if it saw kUnlocked, it holds the lock
///     held          --unlock------> kUnlocked (0)    an exchange; if it saw kContended,
///                                                    one sleeper is woken to contend again
///
/// A waiter that contends leaves the word at kContended even when it wins,
/// so an unlock may wake a thread that has nothing to wait for: a spare
/// wake, never a lost one. The model test (tests/model/model_mutex.cpp)
/// runs the same code over the checker's atomics and futex.
class FutexMutex {
 public:
  /// Takes the mutex, sleeping in the kernel while another thread holds it.
  void lock() noexcept {
    std::int32_t expected = kUnlocked;
    if (word_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire, std::memory_order_relaxed))
        [[likely]] {
      return;
    }
    lock_contended();
  }
  /// Takes the mutex if it is free; false otherwise.
  bool try_lock() noexcept {
    std::int32_t expected = kUnlocked;
    return word_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire, std::memory_order_relaxed);
  }
  /// Lets the mutex go, waking one thread that sleeps on it, if any.
  /// Precondition: this thread holds it.
  void unlock() noexcept {
    if (word_.exchange(kUnlocked, std::memory_order_release) == kContended) [[unlikely]] {
      detail::futex_wake_one(word_);
    }
  }

 private:
  static constexpr std::int32_t kUnlocked = 0;
  static constexpr std::int32_t kLocked = 1;
  static constexpr std::int32_t kContended = 2;

  // contend until the exchange finds the word free; between tries, sleep
  // while it still says kContended (a changed word returns at once).
  void lock_contended() noexcept {
    while (word_.exchange(kContended, std::memory_order_acquire) != kUnlocked) detail::futex_wait(word_, kContended);
  }

  Atomic<std::int32_t> word_{kUnlocked};
};

#endif

#if !defined(POLLUX_MODEL) && !defined(POLLUX_SINGLE_CORE)
/// The mutex under Mutex: FutexMutex. A model build uses the checker's own
/// mutex instead, and checks FutexMutex in a model test of its own.
using RawMutex = FutexMutex;
#endif

#if !defined(POLLUX_MODEL) && !defined(POLLUX_SINGLE_CORE)
/// Sleeps while `word` holds `expected`, until futex_wake_one or _all, or
/// until `deadline` (steady_clock). It may return spuriously, as futex_wait.
void futex_wait_until(Atomic<std::int32_t>& word, std::int32_t expected,
                      std::chrono::steady_clock::time_point deadline) noexcept;
/// Wakes every thread sleeping on `word`.
void futex_wake_all(Atomic<std::int32_t>& word) noexcept;

/// A condition variable over one futex word, for a lock with lock() and
/// unlock() (UniqueLock): the blocking pool's idle threads and block_on's
/// answer. A notify bumps the word, then wakes; a wait reads the word while
/// it still holds the lock, lets the lock go and sleeps only while the word
/// is unchanged, so a notify that comes in between is never lost. It has
/// no mutex of its own: std::condition_variable_any's internal one made a
/// woken thread and its notifier contend (four futex calls per hand-off
/// where two do).
class FutexCondVar {
 public:
  /// Waits until pred() holds.
  template <class Lock, class Pred>
  void wait(Lock& lock, Pred pred) POLLUX_NO_THREAD_SAFETY_ANALYSIS {
    while (!pred()) sleep(lock, std::chrono::steady_clock::time_point::max());
  }
  /// Waits until pred() holds or `timeout` passed; pred()'s value at the end.
  template <class Lock, class Rep, class Period, class Pred>
  bool wait_for(Lock& lock, std::chrono::duration<Rep, Period> timeout, Pred pred) POLLUX_NO_THREAD_SAFETY_ANALYSIS {
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
    while (!pred()) {
      if (std::chrono::steady_clock::now() >= deadline) return pred();
      sleep(lock, deadline);
    }
    return true;
  }
  /// One wait, until a notify (or a spurious wake) or `deadline`.
  template <class Lock>
  std::cv_status wait_until(Lock& lock,
                            std::chrono::steady_clock::time_point deadline) POLLUX_NO_THREAD_SAFETY_ANALYSIS {
    sleep(lock, deadline);
    return std::chrono::steady_clock::now() >= deadline ? std::cv_status::timeout : std::cv_status::no_timeout;
  }
  /// Wakes one waiter (call it after the change it is for, lock held or not).
  void notify_one() noexcept {
    word_.fetch_add(1, std::memory_order_release);
    futex_wake_one(word_);
  }
  /// Wakes every waiter.
  void notify_all() noexcept {
    word_.fetch_add(1, std::memory_order_release);
    futex_wake_all(word_);
  }

 private:
  template <class Lock>
  void sleep(Lock& lock, std::chrono::steady_clock::time_point deadline) POLLUX_NO_THREAD_SAFETY_ANALYSIS {
    std::int32_t seen = word_.load(std::memory_order_acquire);  // under the lock: before any notify for this wait
    lock.unlock();
    futex_wait_until(word_, seen, deadline);
    lock.lock();
  }

  Atomic<std::int32_t> word_{0};
};

/// A condition variable for a UniqueLock (the blocking pool's idle
/// threads): FutexCondVar, or the model checker's in a model build.
using CondVar = FutexCondVar;
#endif

/// A mutex, annotated as a capability for Clang's analysis (neither
/// FutexMutex nor std::mutex has such attributes). Hold it with MutexLock or
/// UniqueLock, which the analysis follows (it does not follow std::lock_guard).
class POLLUX_CAPABILITY("mutex") Mutex {
 public:
  void lock() POLLUX_ACQUIRE() { mutex_.lock(); }
  bool try_lock() POLLUX_THREAD_ANNOTATION(try_acquire_capability(true)) { return mutex_.try_lock(); }
  void unlock() POLLUX_RELEASE() { mutex_.unlock(); }

 private:
  RawMutex mutex_;
};

/// Holds a Mutex for the enclosing scope.
class POLLUX_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) POLLUX_ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
  ~MutexLock() POLLUX_RELEASE() { mutex_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mutex_;
};

/// Holds a Mutex for the enclosing scope, and may let it go and take it
/// again within it (a WakeList waking a full batch, a CondVar's wait); the
/// analysis follows both.
class POLLUX_SCOPED_CAPABILITY UniqueLock {
 public:
  explicit UniqueLock(Mutex& mutex) POLLUX_ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
  ~UniqueLock() POLLUX_RELEASE() {
    if (held_) mutex_.unlock();
  }
  UniqueLock(const UniqueLock&) = delete;
  UniqueLock& operator=(const UniqueLock&) = delete;

  /// Takes the mutex again after unlock().
  void lock() POLLUX_ACQUIRE() {
    mutex_.lock();
    held_ = true;
  }
  /// Lets the mutex go before the scope ends.
  void unlock() POLLUX_RELEASE() {
    held_ = false;
    mutex_.unlock();
  }

 private:
  Mutex& mutex_;
  bool held_ = true;
};

/// A statistic for the runtime's metrics: any thread may read it at any
/// time, and it orders nothing, so every access is relaxed. It is a
/// std::atomic even in a model build: it is not part of any protocol, and
/// scheduling points on it would only multiply the executions to explore.
/// Whether the library counts at all is the library's build choice
/// (`-Dmetrics=false` compiles the counting out; see src/core/metrics.hpp).
class Counter {
 public:
  /// The value now (a relaxed read: a snapshot, not a synchronization).
  std::uint64_t get() const noexcept { return value_.load(std::memory_order_relaxed); }
  /// Adds `n`, from the one thread that writes this counter: a load and a
  /// store, no read-modify-write, so counting costs an ordinary add.
  void add_owned(std::uint64_t n) noexcept {
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  /// Adds `n` from any thread (a relaxed read-modify-write).
  void add_shared(std::uint64_t n) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
  /// Sets the value, from the one thread that writes this counter.
  void set_owned(std::uint64_t value) noexcept { value_.store(value, std::memory_order_relaxed); }

 private:
#if defined(POLLUX_SINGLE_CORE)
  Atomic<std::uint64_t> value_{0};  // no 64-bit std::atomic on a 32-bit core
#else
  std::atomic<std::uint64_t> value_{0};
#endif
};

#if defined(POLLUX_MODEL)
template <class T>
using TrackedCell = ::model::Cell<T>;
inline void note_read(const void* address, const char* what) { ::model::cell_read(address, what); }
inline void note_write(const void* address, const char* what) { ::model::cell_write(address, what); }
#else
/// Tells a model build that the raw memory at `address` (a slot a value is
/// built in) is read; `what` names it in a race's report. Nothing here.
inline void note_read(const void*, const char*) noexcept {}
/// Tells a model build that the raw memory at `address` is written (a
/// value built in it, moved out or destroyed). Nothing here.
inline void note_write(const void*, const char*) noexcept {}

/// A value that a lock-free protocol publishes through its atomics (a
/// oneshot's value, a task's output, the waker an AtomicWaker holds): the
/// protocol's memory orders are what keep its accesses from racing. It is
/// the value itself; in a model build, the checker records every access
/// and reports one that happens-before does not order with a conflicting
/// one, so a memory order too weak to publish the value fails a model test.
template <class T>
class TrackedCell {
 public:
  /// Builds the value in place.
  template <class... Args>
  constexpr explicit TrackedCell(Args&&... args) noexcept(std::is_nothrow_constructible_v<T, Args...>)
      : value_(std::forward<Args>(args)...) {}
  TrackedCell(const TrackedCell&) = delete;
  TrackedCell& operator=(const TrackedCell&) = delete;

  /// The value, to read.
  const T& read() const noexcept { return value_; }
  /// The value, to write.
  T& write() noexcept { return value_; }

 private:
  T value_;
};
#endif

/// A field of a node that its owner's Mutex guards (a waiter's waker,
/// under the lock of the list it waits in). A field's declaration cannot
/// name another object's lock for the analysis, so each access names it
/// instead: `node.waker.get(lock_)` compiles under -Wthread-safety only
/// where `lock_` is held. It starts value-initialized, as the node's own
/// constructor leaves it (no other thread can reach the node yet).
template <class T>
class OwnerGuarded {
 public:
  /// The value, with `lock` (the owner's) held.
  T& get([[maybe_unused]] const Mutex& lock) noexcept POLLUX_REQUIRES(lock) { return value_; }

 private:
  T value_{};
};

}  // namespace pollux::detail
