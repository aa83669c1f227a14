// watch: one value that a sender replaces and many receivers read, tokio's
// watch. Receivers see the latest value only: changed() completes when a
// value newer than the last one the receiver marked seen arrives (or fails
// once the sender is gone), and borrow() reads the value under a shared
// lock. The value lives once, in a seqlock for small trivially copyable
// types (a borrow copies it), else behind a reader-writer lock; a version word
// says whether it changed. changed() embeds its own waiter node (no
// allocation per wait) and stores the waker of its latest poll (rule 2);
// nothing is woken under a lock.
//
// Cancellation safety: a changed() destroyed before it is Ready loses
// nothing: the receiver's seen version does not move.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>  // std::shared_lock
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/future.hpp"
#include "pollux/sync/detail/seqlock_cell.hpp"
#include "pollux/sync/detail/value_lock.hpp"
#include "pollux/sync/detail/waiter_list.hpp"
#include "pollux/sync/detail/wake_list.hpp"
#include "pollux/core/result.hpp"

namespace pollux::watch {

namespace detail {
/// Small trivially copyable values are kept in a seqlock: a borrow copies
/// the value out without any read-modify-write. Others sit behind a
/// reader-writer lock that a borrow holds.
template <class T>
inline constexpr bool kCopied = std::is_trivially_copyable_v<T> && sizeof(T) <= 64;

template <class T, bool Copied = kCopied<T>>
struct ValueCell {
  template <class U>
  explicit ValueCell(U&& initial) : value(std::forward<U>(initial)) {}
  template <class Fn>
  void modify(Fn&& fn) {
    std::unique_lock held(lock);
    std::forward<Fn>(fn)(value);
  }
  pollux::detail::ValueLock lock;
  T value;
};

template <class T>
struct ValueCell<T, true> {
  template <class U>
  explicit ValueCell(U&& initial) {
    cell.store(T(std::forward<U>(initial)));
  }
  template <class Fn>
  void modify(Fn&& fn) {
    T value = cell.load();
    std::forward<Fn>(fn)(value);
    cell.store(value);
  }
  pollux::detail::SeqlockCell<T> cell;  // the value, copied in and out
};

template <class T>
struct Shared {
  template <class U>
  explicit Shared(U&& initial) : value(std::forward<U>(initial)) {}

  ValueCell<T> value;
  // The version word: bit 0 CLOSED (the sender is gone), bits 1+ the
  // number of sends. Changed by the sender only: += 2 after each send
  // (release, after the value was written), |= 1 when it goes.
  pollux::detail::Atomic<std::uint64_t> version{0};
  pollux::detail::Atomic<std::size_t> receivers{1};
  pollux::detail::Atomic<std::size_t> refs{2};
  pollux::detail::Mutex lock;
  pollux::detail::WaiterList waiters POLLUX_GUARDED_BY(lock);

  // Wakes every changed() waiting, outside the lock.
  void wake_all() noexcept {
    pollux::detail::WakeList wakes;
    pollux::detail::MutexLock held(lock);
    waiters.wake_all(lock, wakes);
  }
  void release() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) std::unique_ptr<Shared>{this};
  }
};
}  // namespace detail

/// A read of the current value. For a small trivially copyable T it holds
/// a copy; otherwise it holds the value's shared lock until it is
/// destroyed, so keep it short (a send waits for it). Movable.
template <class T>
class [[nodiscard]] Ref {
  static constexpr bool kCopied = detail::kCopied<T>;

 public:
  /// The value this guard gives access to.
  const T& operator*() const noexcept { return get(); }
  /// The value this guard gives access to.
  const T* operator->() const noexcept { return &get(); }
  /// Whether this value is newer than the one the receiver had marked seen
  /// when it borrowed (always false for a sender's borrow()).
  bool has_changed() const noexcept { return changed_; }

 private:
  template <class U>
  friend class Sender;
  template <class U>
  friend class Receiver;
  struct Empty {};
  Ref(detail::ValueCell<T>& cell, bool changed) requires kCopied : held_(cell.cell.load()), changed_(changed) {}
  Ref(detail::ValueCell<T>& cell, bool changed) requires(!kCopied)
      : lock_(cell.lock), held_(&cell.value), changed_(changed) {}
  const T& get() const noexcept {
    if constexpr (kCopied) {
      return held_;
    } else {
      return *held_;
    }
  }
  [[no_unique_address]] std::conditional_t<kCopied, Empty, std::shared_lock<pollux::detail::ValueLock>> lock_;
  std::conditional_t<kCopied, T, const T*> held_;
  bool changed_;
};

template <class T>
class Receiver;

/// The sending half. Movable; the receivers see the channel closed when it
/// is gone.
template <class T>
class Sender {
 public:
  Sender(Sender&& other) noexcept : shared_(std::exchange(other.shared_, nullptr)) {}
  Sender& operator=(Sender other) noexcept {
    std::swap(shared_, other.shared_);
    return *this;
  }
  ~Sender() {
    if (shared_ == nullptr) return;
    shared_->version.fetch_or(1, std::memory_order_release);
    shared_->wake_all();
    shared_->release();
  }

  /// Replaces the value and wakes every waiting changed(); gives v back
  /// when there is no receiver (the value is then not stored).
  Result<void, SendError<T>> send(T value) {
    check();
    if (shared_->receivers.load(std::memory_order_acquire) == 0) return SendError<T>{std::move(value)};
    shared_->value.modify([&](T& stored) { stored = std::move(value); });
    publish();
    return {};
  }
  /// Changes the value in place with fn(T&), whether or not anyone
  /// receives, and wakes every waiting changed().
  template <class Fn>
  void send_modify(Fn&& fn) {
    check();
    shared_->value.modify(std::forward<Fn>(fn));
    publish();
  }
  /// The current value.
  Ref<T> borrow() const {
    check();
    return Ref<T>(shared_->value, false);
  }
  /// A new receiver, which counts the current value as seen.
  Receiver<T> subscribe() const {
    check();
    shared_->receivers.fetch_add(1, std::memory_order_relaxed);
    shared_->refs.fetch_add(1, std::memory_order_relaxed);
    return Receiver<T>(shared_, shared_->version.load(std::memory_order_acquire) >> 1);
  }
  /// How many receivers exist now.
  std::size_t receiver_count() const {
    check();
    return shared_->receivers.load(std::memory_order_acquire);
  }

 private:
  template <class U, class V>
  friend std::pair<Sender<U>, Receiver<U>> channel(V&& initial);
  explicit Sender(detail::Shared<T>* shared) noexcept : shared_(shared) {}
  void check() const {
    if (shared_ == nullptr) throw std::logic_error("pollux::watch: use of a moved-from sender");
  }
  void publish() noexcept {
    shared_->version.fetch_add(2, std::memory_order_release);
    shared_->wake_all();
  }
  detail::Shared<T>* shared_;
};

/// A receiving half: remembers the last version it marked seen. Copyable
/// (the copy starts with the same seen version).
template <class T>
class Receiver {
 public:
  /// Another receiver, which has seen what `other` has seen.
  Receiver(const Receiver& other) : shared_(other.shared_), seen_(other.seen_) {
    if (shared_) {
      shared_->receivers.fetch_add(1, std::memory_order_relaxed);
      shared_->refs.fetch_add(1, std::memory_order_relaxed);
    }
  }
  Receiver(Receiver&& other) noexcept : shared_(std::exchange(other.shared_, nullptr)), seen_(other.seen_) {}
  Receiver& operator=(Receiver other) noexcept {
    std::swap(shared_, other.shared_);
    std::swap(seen_, other.seen_);
    return *this;
  }
  ~Receiver() {
    if (shared_ == nullptr) return;
    shared_->receivers.fetch_sub(1, std::memory_order_acq_rel);
    shared_->release();
  }

  /// The future of changed(): Ready with success once a value newer than
  /// the last one seen is there (it is then marked seen), or with Closed
  /// once the sender is gone and nothing newer came. Destroying it before
  /// it is Ready loses nothing.
  class Changed;

  /// Waits for a newer value (borrows the receiver).
  Changed changed();
  /// Whether a newer value is there now; Closed once the sender is gone.
  Result<bool, Closed> has_changed() const {
    check();
    std::uint64_t version = shared_->version.load(std::memory_order_acquire);
    if (version & 1) return Closed{};
    return (version >> 1) != seen_;
  }
  /// The current value, without marking it seen.
  Ref<T> borrow() const {
    check();
    std::uint64_t current = shared_->version.load(std::memory_order_acquire) >> 1;
    return Ref<T>(shared_->value, current != seen_);
  }
  /// The current value, marked seen.
  Ref<T> borrow_and_update() {
    check();
    // The version before the value: the value read is that version's or
    // newer, so marking it seen never hides a newer value (at worst a later
    // changed() reports a value already read).
    std::uint64_t current = shared_->version.load(std::memory_order_acquire) >> 1;
    Ref<T> ref(shared_->value, current != seen_);
    seen_ = current;
    return ref;
  }
  /// Marks the current value seen without reading it.
  void mark_unchanged() {
    check();
    seen_ = shared_->version.load(std::memory_order_acquire) >> 1;
  }

 private:
  template <class U>
  friend class Sender;
  template <class U, class V>
  friend std::pair<Sender<U>, Receiver<U>> channel(V&& initial);
  Receiver(detail::Shared<T>* shared, std::uint64_t seen) noexcept : shared_(shared), seen_(seen) {}
  void check() const {
    if (shared_ == nullptr) throw std::logic_error("pollux::watch: use of a moved-from receiver");
  }

  Poll<Result<void, Closed>> poll_changed(Context& cx, pollux::detail::ListedWaiter& waiter) {
    if (auto done = check_version()) return ready(std::move(*done));
    pollux::detail::MutexLock lock(shared_->lock);
    // Again under the lock: a send bumps the version before it takes the
    // lock to wake, so it either is seen here or finds us queued.
    if (auto done = check_version()) {
      shared_->waiters.remove(waiter);
      return ready(std::move(*done));
    }
    shared_->waiters.wait(waiter, cx.waker());
    return pending;
  }
  std::optional<Result<void, Closed>> check_version() {
    std::uint64_t version = shared_->version.load(std::memory_order_acquire);
    if ((version >> 1) != seen_) {
      seen_ = version >> 1;
      return Result<void, Closed>();
    }
    if (version & 1) return Result<void, Closed>(Closed{});
    return std::nullopt;
  }
  void unqueue(pollux::detail::ListedWaiter& waiter) noexcept {
    pollux::detail::MutexLock lock(shared_->lock);
    shared_->waiters.remove(waiter);
  }

  detail::Shared<T>* shared_;
  std::uint64_t seen_;
};

template <class T>
class Receiver<T>::Changed : public pollux::detail::ListedFuture<Receiver<T>, Result<void, Closed>,
                                                                 &Receiver<T>::poll_changed, &Receiver<T>::unqueue> {
  using pollux::detail::ListedFuture<Receiver<T>, Result<void, Closed>, &Receiver<T>::poll_changed,
                                     &Receiver<T>::unqueue>::ListedFuture;
};

template <class T>
typename Receiver<T>::Changed Receiver<T>::changed() {
  check();
  return Changed(*this);
}

/// A watch channel holding `initial`, which the first receiver counts as seen.
template <class T, class V>
std::pair<Sender<T>, Receiver<T>> channel(V&& initial) {
  auto* shared = std::make_unique<detail::Shared<T>>(std::forward<V>(initial)).release();
  return {Sender<T>(shared), Receiver<T>(shared, 0)};
}

}  // namespace pollux::watch
