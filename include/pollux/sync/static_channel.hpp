// StaticChannel<T, N>: a bounded many-producer, one-consumer channel whose
// N slots live inside it, so it allocates nothing: a global on a
// microcontroller (where an interrupt handler may try_send into it), or a
// member on a host. send() waits for room, in the order senders came;
// recv() waits for a value. Wakers run after the lock is let go (nothing is
// woken while a lock is held), and a destroyed send() or recv() unlinks
// its waiter (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <memory>
#include <new>
#include <optional>
#include <utility>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/intrusive_list.hpp"
#include "pollux/core/detail/pin_check.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/waker.hpp"
#include "pollux/sync/detail/wake_list.hpp"

namespace pollux {

/// A bounded channel of N values of type T stored inline. Any number of
/// senders (tasks through send(), interrupt handlers or other threads
/// through try_send()); one receiver task at a time. It must outlive every
/// send() and recv() future made from it.
template <class T, std::size_t N>
class StaticChannel {
  static_assert(N > 0, "a StaticChannel needs at least one slot");

  // A send() waiting for room: linked in `senders_` under the lock; the
  // receiver unlinks it and wakes it when a slot frees.
  struct SendWaiter {
    detail::ListHook<SendWaiter> hook;
    detail::OwnerGuarded<Waker> waker;  // under the channel's lock
    detail::OwnerGuarded<bool> linked;  // under the channel's lock
  };

 public:
  constexpr StaticChannel() noexcept = default;
  StaticChannel(const StaticChannel&) = delete;
  StaticChannel& operator=(const StaticChannel&) = delete;
  ~StaticChannel() {
    detail::MutexLock lock(lock_);  // uncontended: nobody may use a channel being destroyed
    while (count_ > 0) pop_locked();
  }

  /// Puts `value` in a free slot and wakes the receiver; false (the value
  /// is left as it was) when every slot is full or the channel is closed.
  /// Never waits: an interrupt handler may call it.
  template <class U = T>
  [[nodiscard]] bool try_send(U&& value) noexcept(std::is_nothrow_constructible_v<T, U&&>) POLLUX_EXCLUDES(lock_) {
    Waker receiver;
    {
      detail::MutexLock lock(lock_);
      if (closed_ || count_ == N) return false;
      std::construct_at(slot((head_ + count_) % N), std::forward<U>(value));
      ++count_;
      receiver = std::move(receiver_);
    }
    std::move(receiver).wake();
    return true;
  }

  /// The future of send(): Ready with true once the value is in the
  /// channel, false (the value dropped) if it was closed first.
  class [[nodiscard("futures do nothing unless polled")]] Send {
   public:
    using Output = bool;

    Send(Send && other) noexcept(std::is_nothrow_move_constructible_v<T>)
        : channel_(other.channel_), value_(std::move(other.value_)), pin_(std::move(other.pin_)) {}
    Send& operator=(Send&&) = delete;
    ~Send() {
      if (queued_) channel_->cancel(waiter_);
    }

    /// Ready once the value went in, or the channel is closed.
    Poll<bool> poll(Context & cx) {
      POLLUX_CHECK_NOT_DONE(Send, value_.has_value());
      switch (channel_->offer(*value_, waiter_, cx.waker())) {
        case Offer::Sent:
          value_.reset();
          return Poll<bool>(std::in_place, true);
        case Offer::Closed:
          value_.reset();
          return Poll<bool>(std::in_place, false);
        case Offer::Waiting:
          queued_ = true;
          pin_.pin();
          return pending;
      }
      return pending;
    }

   private:
    friend class StaticChannel;
    Send(StaticChannel & channel, T value) : channel_(&channel), value_(std::move(value)) {}

    StaticChannel* channel_;
    std::optional<T> value_;  // empty once sent or dropped
    SendWaiter waiter_;
    bool queued_ = false;  // it waited once: the destructor asks the channel to unlink it
    [[no_unique_address]] detail::PinCheck<Send> pin_;
  };

  /// The future of recv(): Ready with the oldest value, or nullopt once
  /// the channel is closed and empty.
  class [[nodiscard("futures do nothing unless polled")]] Recv {
   public:
    using Output = std::optional<T>;

    Recv(Recv && other) noexcept : channel_(other.channel_), waited_(std::exchange(other.waited_, false)) {}
    Recv& operator=(Recv&&) = delete;
    /// Takes its waker back from the channel, if it left one (rule 5).
    ~Recv() {
      if (waited_) channel_->forget_receiver();
    }

    /// Ready with a value, or nullopt when closed and drained.
    Poll<std::optional<T>> poll(Context & cx) {
      auto taken = channel_->take(cx.waker());
      waited_ = taken.is_pending();
      return taken;
    }

   private:
    friend class StaticChannel;
    explicit Recv(StaticChannel & channel) noexcept : channel_(&channel) {}

    StaticChannel* channel_;
    bool waited_ = false;  // its waker is in the channel
  };

  /// Sends `value`, waiting for a free slot (senders get slots in the
  /// order they started waiting).
  Send send(T value) { return Send(*this, std::move(value)); }

  /// Receives the oldest value; one receiver at a time.
  Recv recv() noexcept { return Recv(*this); }

  /// Refuses further values and wakes every waiting sender (their send()
  /// is false) and the receiver, which still takes the values left.
  void close() noexcept POLLUX_EXCLUDES(lock_) {
    detail::WakeList wakes;  // woken when it goes, after the lock
    detail::MutexLock lock(lock_);
    closed_ = true;
    while (!senders_.empty()) {
      if (wakes.flush_if_full(lock_)) continue;
      SendWaiter& waiter = senders_.pop_front();
      waiter.linked.get(lock_) = false;
      wakes.push(std::move(waiter.waker.get(lock_)));
    }
    wakes.flush_if_full(lock_);
    wakes.push(std::move(receiver_));
  }

  /// The values waiting now.
  std::size_t size() const noexcept POLLUX_EXCLUDES(lock_) {
    detail::MutexLock lock(lock_);
    return count_;
  }

  /// The number of slots.
  static constexpr std::size_t capacity() noexcept { return N; }

 private:
  enum class Offer : unsigned char { Sent, Waiting, Closed };

  T* slot(std::size_t i) noexcept POLLUX_REQUIRES(lock_) {
    return std::launder(reinterpret_cast<T*>(storage_ + i * sizeof(T)));
  }

  T pop_locked() noexcept(std::is_nothrow_move_constructible_v<T>) POLLUX_REQUIRES(lock_) {
    T* first = slot(head_);
    T value = std::move(*first);
    std::destroy_at(first);
    head_ = (head_ + 1) % N;
    --count_;
    return value;
  }

  // A send()'s poll: stores the value if a slot is free and nobody queued
  // earlier, else (re)queues the waiter with `waker`.
  Offer offer(T& value, SendWaiter& waiter, const Waker& waker) POLLUX_EXCLUDES(lock_) {
    Waker receiver;
    {
      detail::MutexLock lock(lock_);
      bool& linked = waiter.linked.get(lock_);
      if (closed_) {
        if (linked) senders_.erase(waiter);
        linked = false;
        return Offer::Closed;
      }
      bool my_turn = linked ? &senders_.front() == &waiter : senders_.empty();
      if (count_ == N || !my_turn) {
        Waker& kept = waiter.waker.get(lock_);
        if (!kept.will_wake(waker)) kept = waker;
        if (!linked) senders_.push_back(waiter);
        linked = true;
        return Offer::Waiting;
      }
      if (linked) senders_.erase(waiter);
      linked = false;
      std::construct_at(slot((head_ + count_) % N), std::move(value));
      ++count_;
      receiver = std::move(receiver_);
    }
    std::move(receiver).wake();
    return Offer::Sent;
  }

  // A destroyed send(): leaves the queue. If it was first and a slot is
  // free, the next sender may now take it: it is woken.
  void cancel(SendWaiter& waiter) noexcept POLLUX_EXCLUDES(lock_) {
    Waker next;
    {
      detail::MutexLock lock(lock_);
      bool& linked = waiter.linked.get(lock_);
      if (!linked) return;
      bool was_first = &senders_.front() == &waiter;
      senders_.erase(waiter);
      linked = false;
      if (was_first && count_ < N && !senders_.empty()) next = senders_.front().waker.get(lock_);
    }
    std::move(next).wake();
  }

  // A waiting recv() went away: its waker must not be woken any more.
  void forget_receiver() noexcept POLLUX_EXCLUDES(lock_) {
    Waker dropped;  // dropped after the lock: a drop may be the task's last reference
    detail::MutexLock lock(lock_);
    dropped = std::move(receiver_);
  }

  // recv()'s poll: the oldest value, and a wake for the first waiting
  // sender, since a slot just freed.
  Poll<std::optional<T>> take(const Waker& waker) POLLUX_EXCLUDES(lock_) {
    std::optional<T> value;
    Waker sender;
    {
      detail::MutexLock lock(lock_);
      if (count_ == 0) {
        if (closed_) return Poll<std::optional<T>>(std::in_place, std::nullopt);
        if (!receiver_.will_wake(waker)) receiver_ = waker;
        return pending;
      }
      value.emplace(pop_locked());
      if (!senders_.empty()) sender = senders_.front().waker.get(lock_);
    }
    std::move(sender).wake();
    return Poll<std::optional<T>>(std::in_place, std::move(value));
  }

  mutable detail::Mutex lock_;
  alignas(T) std::byte storage_[N * sizeof(T)] POLLUX_GUARDED_BY(lock_){};
  std::size_t head_ POLLUX_GUARDED_BY(lock_) = 0;   // the oldest value's slot
  std::size_t count_ POLLUX_GUARDED_BY(lock_) = 0;  // values stored, from head_ on (wrapping)
  bool closed_ POLLUX_GUARDED_BY(lock_) = false;
  Waker receiver_ POLLUX_GUARDED_BY(lock_);  // the receiver's, while it waits for a value
  detail::IntrusiveList<SendWaiter, &SendWaiter::hook> senders_ POLLUX_GUARDED_BY(lock_);
};

}  // namespace pollux
