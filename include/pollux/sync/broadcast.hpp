// broadcast: one value to many receivers, tokio's broadcast. Every
// receiver sees every value sent after it subscribed, in order, unless it
// falls more than `capacity` values behind: then recv() reports how many it
// missed (RecvError::Kind::Lagged) and resumes at the oldest value kept.
// send() never waits. Each value is stored once, in a ring of `capacity`
// slots made by the first send (a channel nobody sends on costs none of
// them); receivers get their own copy as they take it (the last one to
// take it gets the stored value moved), and the stored value is destroyed
// as soon as no live receiver can still receive it.
//
// For small trivially copyable T (numbers, plain structs up to 64 bytes) a
// receiver reads a slot without taking any lock, as a seqlock: it copies,
// then checks that the slot was not overwritten meanwhile. Other types are
// read under the channel's lock. recv() embeds its own waiter node (no
// allocation per wait), stores the waker of its latest poll (rule 2), and
// nothing is woken under the lock.
//
// Cancellation safety: a recv() destroyed before it is Ready loses nothing;
// the receiver's position does not move.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/future.hpp"
#include "pollux/sync/detail/atomic_words.hpp"
#include "pollux/sync/detail/waiter_list.hpp"
#include "pollux/sync/detail/wake_list.hpp"
#include "pollux/stream/stream.hpp"
#include "pollux/core/result.hpp"

namespace pollux::broadcast {

/// Why a receive got no value.
struct RecvError {
  /// Why there was no value.
  enum class Kind {
    Empty,   ///< try_recv only: nothing new yet
    Closed,  ///< every sender is gone and every value was received
    Lagged,  ///< the receiver fell behind; `missed` values were dropped for it
  };
  /// Why there was no value.
  Kind kind;
  /// With Lagged: how many values this receiver missed.
  std::uint64_t missed = 0;
  /// The channel ended.
  bool is_closed() const noexcept { return kind == Kind::Closed; }
  /// The receiver fell behind; see `missed`.
  bool is_lagged() const noexcept { return kind == Kind::Lagged; }
};

namespace detail {

/// Small trivially copyable values are read without the lock (a seqlock).
template <class T>
inline constexpr bool kLockFree = pollux::detail::kFitsAtomicWords<T>;

template <class T, bool LockFree = kLockFree<T>>
struct Slot;

/// A seqlock slot whose sequence is the position it holds: `pos` is that
/// position, or kWriting while the sender rewrites it. A reader racing a
/// rewrite sees `pos` changed after its copy and drops the copy.
template <class T>
struct Slot<T, true> {
  static constexpr std::uint64_t kWriting = UINT64_MAX - 1;
  pollux::detail::Atomic<std::uint64_t> pos{UINT64_MAX};
  pollux::detail::AtomicWords<T> value;

  // Under the channel's lock, `held`.
  void write([[maybe_unused]] const pollux::detail::Mutex& held, std::uint64_t position, T&& v,
             std::size_t /*receivers*/) noexcept POLLUX_REQUIRES(held) {
    pos.store(kWriting, std::memory_order_relaxed);
    value.store(v);
    pos.store(position, std::memory_order_release);
  }
  // Without the lock: the value at `position`, or nullopt when the slot
  // holds another position (not yet written, or overwritten).
  std::optional<T> try_read(std::uint64_t position) const noexcept {
    if (pos.load(std::memory_order_acquire) != position) return std::nullopt;
    typename pollux::detail::AtomicWords<T>::Raw raw = value.load();
    if (pos.load(std::memory_order_relaxed) != position) return std::nullopt;
    return pollux::detail::AtomicWords<T>::decode(raw);
  }
  // Under the lock: a receiver leaves without reading it. Nothing to free.
  void forget([[maybe_unused]] const pollux::detail::Mutex& held) noexcept POLLUX_REQUIRES(held) {}
};

/// A locked slot: read under the channel's lock; `remaining` counts the
/// receivers that may still take the value, which is destroyed at 0.
template <class T>
struct Slot<T, false> {
  pollux::detail::Atomic<std::uint64_t> pos{UINT64_MAX};
  // Under the channel's lock.
  pollux::detail::OwnerGuarded<std::optional<T>> value;
  pollux::detail::OwnerGuarded<std::size_t> remaining;

  // A value that lagging receivers did not take is destroyed: they lose it.
  void write(const pollux::detail::Mutex& held, std::uint64_t position, T&& v, std::size_t receivers)
      POLLUX_REQUIRES(held) {
    value.get(held).emplace(std::move(v));
    remaining.get(held) = receivers;
    pos.store(position, std::memory_order_release);
  }
  std::optional<T> try_read(std::uint64_t) const noexcept { return std::nullopt; }
  // Under the lock, with the slot at the receiver's position.
  std::optional<T> take(const pollux::detail::Mutex& held) POLLUX_REQUIRES(held) {
    std::optional<T> out;
    if (remaining.get(held) == 1) {
      out.emplace(std::move(*value.get(held)));  // the last receiver: no copy
    } else {
      out.emplace(*value.get(held));
    }
    forget(held);
    return out;
  }
  // Under the lock: a receiver that will never take the value leaves it.
  void forget(const pollux::detail::Mutex& held) noexcept POLLUX_REQUIRES(held) {
    if (value.get(held) && --remaining.get(held) == 0) value.get(held).reset();
  }
};

template <class T>
struct Shared {
  explicit Shared(std::size_t capacity_in) : capacity(capacity_in), mask(capacity_in - 1) {}
  ~Shared() {
    if (Slot<T>* ring = slots.load(std::memory_order_relaxed)) {
      std::destroy_n(ring, capacity);
      std::allocator<Slot<T>>().deallocate(ring, capacity);
    }
  }

  // The ring, made by the first send: a channel that never carries a value
  // (a subscription nobody publishes to) costs no slots. Written once,
  // under the lock; the lock-free read path loads it with acquire.
  pollux::detail::Atomic<Slot<T>*> slots{nullptr};
  std::size_t capacity;
  std::size_t mask;
  // Under the lock: the ring, made now if no value was sent before.
  Slot<T>* ring() POLLUX_REQUIRES(lock) {
    Slot<T>* ring = slots.load(std::memory_order_relaxed);
    if (ring == nullptr) {
      // operator new, not new[]: one allocation that an allocator the
      // program replaces (or counts) sees as such.
      ring = std::allocator<Slot<T>>().allocate(capacity);
      std::uninitialized_default_construct_n(ring, capacity);  // Slot's constructors do not throw
      slots.store(ring, std::memory_order_release);
    }
    return ring;
  }
  pollux::detail::Mutex lock;
  std::uint64_t tail POLLUX_GUARDED_BY(lock) = 0;  // the next position to write
  std::size_t receivers POLLUX_GUARDED_BY(lock) = 0;
  std::size_t senders POLLUX_GUARDED_BY(lock) = 1;
  bool closed POLLUX_GUARDED_BY(lock) = false;
  pollux::detail::WaiterList waiters POLLUX_GUARDED_BY(lock);
  // Frees the channel when the last sender or receiver leaves (under no lock).
  static void maybe_free(Shared* shared, bool last) {
    if (last) std::unique_ptr<Shared>{shared};
  }
};

}  // namespace detail

template <class T>
class Receiver;

/// The sending half. Copyable; the channel closes when the last copy is gone.
template <class T>
class Sender {
 public:
  /// Another sender of the same channel.
  Sender(const Sender& other) : shared_(other.shared_) {
    if (shared_) {
      pollux::detail::MutexLock lock(shared_->lock);
      ++shared_->senders;
    }
  }
  Sender(Sender&& other) noexcept : shared_(std::exchange(other.shared_, nullptr)) {}
  Sender& operator=(Sender other) noexcept {
    std::swap(shared_, other.shared_);
    return *this;
  }
  ~Sender() {
    if (shared_ == nullptr) return;
    bool last;
    {
      pollux::detail::WakeList wakes;
      pollux::detail::MutexLock lock(shared_->lock);
      if (--shared_->senders == 0) {
        shared_->closed = true;
        shared_->waiters.wake_all(shared_->lock, wakes);
      }
      last = shared_->senders == 0 && shared_->receivers == 0;
    }
    detail::Shared<T>::maybe_free(shared_, last);
  }

  /// Sends v to every receiver; returns how many there are, or gives v back
  /// when there is none. Never waits: a receiver more than `capacity`
  /// values behind loses the oldest.
  Result<std::size_t, SendError<T>> send(T value) const {
    check();
    pollux::detail::WakeList wakes;  // destroyed last: wakes after the lock is released
    pollux::detail::MutexLock lock(shared_->lock);
    std::size_t receivers = shared_->receivers;
    if (receivers == 0) return SendError<T>{std::move(value)};
    detail::Slot<T>* ring = shared_->ring();  // may throw bad_alloc: nothing changed yet
    std::uint64_t position = shared_->tail++;
    auto& slot = ring[position & shared_->mask];
    slot.write(shared_->lock, position, std::move(value), receivers);
    shared_->waiters.wake_all(shared_->lock, wakes);
    return receivers;
  }

  /// A new receiver that sees the values sent from now on.
  Receiver<T> subscribe() const {
    check();
    return Receiver<T>(shared_);
  }
  /// How many receivers there are now.
  std::size_t receiver_count() const {
    check();
    pollux::detail::MutexLock lock(shared_->lock);
    return shared_->receivers;
  }

 private:
  template <class U>
  friend std::pair<Sender<U>, Receiver<U>> channel(std::size_t capacity);
  explicit Sender(detail::Shared<T>* shared) noexcept : shared_(shared) {}
  void check() const {
    if (shared_ == nullptr) throw std::logic_error("pollux::broadcast: use of a moved-from sender");
  }
  detail::Shared<T>* shared_;
};

/// A receiving half: its own position in the stream of values. Movable.
template <class T>
class Receiver {
 public:
  Receiver(Receiver&& other) noexcept : shared_(std::exchange(other.shared_, nullptr)), next_(other.next_) {}
  Receiver& operator=(Receiver&& other) noexcept {
    if (this != &other) {
      leave();
      shared_ = std::exchange(other.shared_, nullptr);
      next_ = other.next_;
    }
    return *this;
  }
  ~Receiver() { leave(); }

  /// The future of recv(): the next value, or RecvError (Lagged, Closed).
  /// Destroying it before it is Ready loses nothing.
  class Recv;

  /// Waits for the next value (borrows the receiver).
  Recv recv();
  /// This receiver as a Stream (tokio-stream's BroadcastStream).
  class RecvStream;
  /// The receiver as a Stream of Result<T, RecvError> (a lag is an item, the
  /// end of the channel ends the stream).
  RecvStream into_stream() &&;
  /// The next value now, or RecvError (Empty, Lagged, Closed).
  Result<T, RecvError> try_recv() {
    check();
    pollux::detail::ListedWaiter unused;
    return take(nullptr, unused);
  }
  /// A new receiver on the same channel, at the newest position.
  Receiver resubscribe() const {
    check();
    return Receiver(shared_);
  }

 private:
  friend class Sender<T>;
  template <class U>
  friend std::pair<Sender<U>, Receiver<U>> channel(std::size_t capacity);
  explicit Receiver(detail::Shared<T>* shared) : shared_(shared) {
    pollux::detail::MutexLock lock(shared_->lock);
    ++shared_->receivers;
    next_ = shared_->tail;
  }
  void check() const {
    if (shared_ == nullptr) throw std::logic_error("pollux::broadcast: use of a moved-from receiver");
  }

  Poll<Result<T, RecvError>> poll_recv(Context& cx, pollux::detail::ListedWaiter& waiter) {
    if (detail::Slot<T>* ring = shared_->slots.load(std::memory_order_acquire)) {
      if (std::optional<T> value = ring[next_ & shared_->mask].try_read(next_)) {  // the lock-free path
        ++next_;
        return ready(Result<T, RecvError>(std::move(*value)));
      }
    }
    Result<T, RecvError> result = take(&cx, waiter);
    if (!result && result.error().kind == RecvError::Kind::Empty) return pending;
    return ready(std::move(result));
  }

  // Under the lock, with `slot` at next_: its value. Returned, not
  // assigned: a receive asks only that T can be copied (or moved).
  std::optional<T> take_locked(detail::Slot<T>& slot) POLLUX_REQUIRES(shared_->lock) {
    if constexpr (detail::kLockFree<T>) {
      return slot.try_read(next_);  // no writer can run now: cannot fail
    } else {
      return slot.take(shared_->lock);
    }
  }

  // Under the lock: the value at next_, or Lagged, Closed, or Empty (and
  // then, with a context, the waiter is queued with its waker).
  Result<T, RecvError> take(Context* cx, pollux::detail::ListedWaiter& waiter) {
    pollux::detail::MutexLock lock(shared_->lock);
    if (detail::Slot<T>* ring = shared_->slots.load(std::memory_order_relaxed)) {
      auto& slot = ring[next_ & shared_->mask];
      if (slot.pos.load(std::memory_order_relaxed) == next_) {
        std::optional<T> value = take_locked(slot);
        ++next_;
        return std::move(*value);
      }
    }
    if (shared_->tail > next_ && shared_->tail - next_ > shared_->capacity) {
      // Lagged: resume at the oldest value kept.
      std::uint64_t oldest = shared_->tail - shared_->capacity;
      std::uint64_t missed = oldest - next_;
      next_ = oldest;
      return RecvError{RecvError::Kind::Lagged, missed};
    }
    if (shared_->closed) return RecvError{RecvError::Kind::Closed};
    if (cx != nullptr) shared_->waiters.wait(waiter, cx->waker());
    return RecvError{RecvError::Kind::Empty};
  }

  void unqueue(pollux::detail::ListedWaiter& waiter) noexcept {
    pollux::detail::MutexLock lock(shared_->lock);
    shared_->waiters.remove(waiter);
  }

  // Gives up this receiver's claim on every value it has not taken, so
  // values nobody else needs are destroyed now.
  void leave() noexcept {
    if (shared_ == nullptr) return;
    bool last;
    {
      pollux::detail::MutexLock lock(shared_->lock);
      detail::Slot<T>* ring = shared_->slots.load(std::memory_order_relaxed);
      if constexpr (!detail::kLockFree<T>) {
        std::uint64_t from = next_;
        if (shared_->tail - from > shared_->capacity) from = shared_->tail - shared_->capacity;
        for (std::uint64_t p = from; ring != nullptr && p < shared_->tail; ++p) {
          auto& slot = ring[p & shared_->mask];
          if (slot.pos.load(std::memory_order_relaxed) == p) slot.forget(shared_->lock);
        }
      }
      --shared_->receivers;
      last = shared_->senders == 0 && shared_->receivers == 0;
    }
    detail::Shared<T>::maybe_free(std::exchange(shared_, nullptr), last);
  }

  detail::Shared<T>* shared_;
  std::uint64_t next_ = 0;
};

template <class T>
class Receiver<T>::Recv : public pollux::detail::ListedFuture<Receiver<T>, Result<T, RecvError>,
                                                              &Receiver<T>::poll_recv, &Receiver<T>::unqueue> {
  using pollux::detail::ListedFuture<Receiver<T>, Result<T, RecvError>, &Receiver<T>::poll_recv,
                                     &Receiver<T>::unqueue>::ListedFuture;
};

/// Waits for the next value (borrows the receiver).
template <class T>
typename Receiver<T>::Recv Receiver<T>::recv() {
  check();
  return Recv(*this);
}

/// A channel keeping the last `capacity` values (rounded up to a power of
/// two; at least 1: throws std::invalid_argument for 0).
template <class T>
std::pair<Sender<T>, Receiver<T>> channel(std::size_t capacity) {
  if (capacity == 0) throw std::invalid_argument("pollux::broadcast::channel: the capacity must be at least 1");
  if (capacity > (std::size_t{1} << 32)) throw std::invalid_argument("pollux::broadcast::channel: capacity above 2^32");
  std::size_t rounded = 1;
  while (rounded < capacity) rounded <<= 1;
  auto* shared = std::make_unique<detail::Shared<T>>(rounded).release();
  Sender<T> sender(shared);
  return {std::move(sender), Receiver<T>(shared)};
}

/// A receiver as a Stream of Result<T, RecvError>: each value, or Lagged
/// when the receiver fell behind (the stream goes on from the oldest value
/// kept); the stream ends when the channel closed. Not moved after its
/// first poll (its receive future waits in the channel's list, rule 4).
/// Cancellation: next() on it loses nothing.
template <class T>
class [[nodiscard("streams do nothing unless polled")]] Receiver<T>::RecvStream {
 public:
  using Item = Result<T, RecvError>;

  /// What into_stream() makes.
  explicit RecvStream(Receiver<T> receiver) : receiver_(std::move(receiver)) {}
  RecvStream(RecvStream && other) noexcept : receiver_(std::move(other.receiver_)) {}
  RecvStream& operator=(RecvStream&&) = delete;

  /// The next value, or a lag as an error item; the end once every sender is gone.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (!recv_) recv_.emplace(receiver_.recv());
    auto value = recv_->poll(cx);
    if (value.is_pending()) return pending;
    recv_.reset();
    if (!value.value() && value.value().error().kind == RecvError::Kind::Closed) return stream_end;
    return ready(std::move(value).value());
  }

 private:
  Receiver<T> receiver_;
  std::optional<Recv> recv_;  // the receive in flight
};

template <class T>
typename Receiver<T>::RecvStream Receiver<T>::into_stream() && {
  return RecvStream(std::move(*this));
}

}  // namespace pollux::broadcast
