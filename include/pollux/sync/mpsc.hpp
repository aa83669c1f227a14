// mpsc: multi-producer, single-consumer channels, tokio's mpsc.
// `channel<T>(capacity)` gives a bounded channel: send(v) is a future that
// waits while `capacity` values are queued, senders waiting for room are
// served in FIFO order, and a freed slot goes to the oldest waiter at once.
// `unbounded_channel<T>()` never waits: send(v) returns at once.
// Senders are copyable; the channel ends when the last one is gone and the
// receiver has taken every queued value (recv() then gives nullopt). A send
// to a channel whose receiver is gone or closed fails and gives the value
// back. Values move through a list of reused blocks (detail/block_queue):
// no allocation per message on a warm channel; thread-safe; the receiver's
// waker is the one of its latest poll (rule 2).
//
// Cancellation safety: a recv() destroyed before it is Ready loses no
// value (it stays queued). A bounded send() destroyed while it waits for
// room gives its place (or a slot granted to it) back; its value is
// dropped with it.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "pollux/core/atomic_waker.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/sync/detail/batch_semaphore.hpp"
#include "pollux/sync/detail/block_queue.hpp"
#include "pollux/sync/notify.hpp"
#include "pollux/core/result.hpp"
#include "pollux/sink/sink.hpp"

namespace pollux::mpsc {

namespace detail {
/// What the senders and the receiver share. Freed by whichever side leaves
/// last (refs: one per sender, one for the receiver).
template <class T>
struct Chan {
  explicit Chan(std::size_t capacity) {
    if (capacity > 0) permits.emplace(capacity);
  }

  pollux::detail::BlockQueue<T> queue;
  std::optional<pollux::detail::BatchSemaphore> permits;  // bounded only: free room
  AtomicWaker rx_waker;
  Notify rx_gone;  // Sender::closed() waits on it
  pollux::detail::Atomic<bool> rx_closed{false};
  pollux::detail::Atomic<std::size_t> senders{1};
  pollux::detail::Atomic<std::size_t> refs{2};

  template <class U>
  bool push(U&& value) {
    return queue.push(std::forward<U>(value), [this] { rx_waker.wake_by_ref(); });
  }

  void add_sender() noexcept {
    senders.fetch_add(1, std::memory_order_relaxed);
    refs.fetch_add(1, std::memory_order_relaxed);
  }
  // The last sender closes the queue: the receiver reads what was sent,
  // then sees the end.
  void remove_sender() noexcept {
    if (senders.fetch_sub(1, std::memory_order_acq_rel) == 1 && queue.close()) rx_waker.wake_by_ref();
    release();
  }
  void close_rx() noexcept {
    if (rx_closed.exchange(true, std::memory_order_acq_rel)) return;
    queue.close();
    if (permits) permits->close();
    rx_gone.notify_waiters();
  }
  void release() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) std::unique_ptr<Chan>{this};
  }
};

/// Shared by Sender and UnboundedSender: counting, closed() and is_closed().
template <class T>
class SenderBase {
 public:
  SenderBase(const SenderBase& other) noexcept : chan_(other.chan_) {
    if (chan_) chan_->add_sender();
  }
  SenderBase(SenderBase&& other) noexcept : chan_(std::exchange(other.chan_, nullptr)) {}
  SenderBase& operator=(SenderBase other) noexcept {
    std::swap(chan_, other.chan_);
    return *this;
  }
  ~SenderBase() {
    if (chan_) chan_->remove_sender();
  }

  /// The future of closed(): Ready once the receiver is gone or closed.
  class [[nodiscard("futures do nothing unless polled")]] ClosedFuture {
   public:
    using Output = void;
    /// Pending until it completes, with the waker of this poll stored (rule 2).
    Poll<void> poll(Context & cx) {
      if (chan_->rx_closed.load(std::memory_order_acquire)) return ready();
      return notified_.poll(cx);  // close_rx() sets rx_closed, then notifies every waiter
    }

   private:
    friend class SenderBase;
    explicit ClosedFuture(Chan<T> & chan) noexcept : chan_(&chan), notified_(chan.rx_gone.notified()) {}
    Chan<T>* chan_;
    Notify::Notified notified_;
  };

  /// Completes when the receiver is gone or closed, so a producer can stop
  /// making values nobody will read.
  ClosedFuture closed() const {
    check();
    return ClosedFuture(*chan_);
  }
  /// True once the receiver is gone or closed: every send fails from now on.
  bool is_closed() const {
    check();
    return chan_->rx_closed.load(std::memory_order_acquire);
  }
  /// True when both senders feed the same channel.
  bool same_channel(const SenderBase& other) const noexcept { return chan_ == other.chan_; }

 protected:
  explicit SenderBase(Chan<T>* chan) noexcept : chan_(chan) {}
  void check() const {
    if (chan_ == nullptr) throw std::logic_error("pollux::mpsc: use of a moved-from sender");
  }
  Chan<T>* chan_;
};
}  // namespace detail

template <class T>
class Receiver;
template <class T>
class PollSender;

/// The sending half of a bounded channel. Copyable.
template <class T>
class Sender : public detail::SenderBase<T> {
  using Base = detail::SenderBase<T>;
  using Base::chan_;

 public:
  /// The future of send(v): Ready with success once v is queued, or with
  /// SendError holding v when the receiver is gone or closed.
  class [[nodiscard("futures do nothing unless polled")]] Send {
   public:
    using Output = Result<void, SendError<T>>;
    /// Pending until it completes, with the waker of this poll stored (rule 2).
    Poll<Output> poll(Context & cx) {
      Poll<bool> room = room_.poll(cx);
      if (room.is_pending()) return pending;
      if (!room.value()) return ready(Output(SendError<T>{std::move(value_)}));
      if (!chan_->push(std::move(value_))) {
        chan_->permits->release(1);
        return ready(Output(SendError<T>{std::move(value_)}));
      }
      return ready(Output());
    }

   private:
    friend class Sender;
    Send(detail::Chan<T> & chan, T value) : chan_(&chan), value_(std::move(value)), room_(*chan.permits, 1) {}
    detail::Chan<T>* chan_;
    T value_;
    pollux::detail::AcquireFuture room_;
  };

  /// Queues v, waiting for room while the channel is full (FIFO among the
  /// waiting senders).
  Send send(T value) const {
    this->check();
    return Send(*chan_, std::move(value));
  }
  /// Queues v now, or gives it back: Full (no room, or others wait for
  /// room first) or Closed.
  Result<void, TrySendError<T>> try_send(T value) const {
    this->check();
    if (auto error = chan_->permits->try_acquire(1)) {
      auto kind = *error == TryAcquireError::Closed ? TrySendError<T>::Kind::Closed : TrySendError<T>::Kind::Full;
      return TrySendError<T>{kind, std::move(value)};
    }
    if (!chan_->push(std::move(value))) {
      chan_->permits->release(1);
      return TrySendError<T>{TrySendError<T>::Kind::Closed, std::move(value)};
    }
    return {};
  }
  /// Free room now.
  std::size_t capacity() const {
    this->check();
    return chan_->permits->available();
  }

 private:
  friend class PollSender<T>;
  template <class U>
  friend std::pair<Sender<U>, Receiver<U>> channel(std::size_t capacity);
  explicit Sender(detail::Chan<T>* chan) noexcept : Base(chan) {}
};

/// The sending half of an unbounded channel. Copyable.
template <class T>
class UnboundedSender : public detail::SenderBase<T> {
  using Base = detail::SenderBase<T>;
  using Base::chan_;

 public:
  /// Queues v at once, or gives it back when the receiver is gone or closed.
  Result<void, SendError<T>> send(T value) const {
    this->check();
    if (!chan_->push(std::move(value))) return SendError<T>{std::move(value)};
    return {};
  }

  /// As a Sink: the receiver being gone is the one way a step fails.
  using Error = Closed;
  /// Sink: Ready at once (an unbounded channel has room), Closed once the
  /// receiver is gone or this sender was closed.
  Poll<Result<void, Closed>> poll_ready(Context&) const {
    if (chan_ == nullptr || chan_->rx_closed.load(std::memory_order_acquire))
      return ready(Result<void, Closed>(Closed{}));
    return ready(Result<void, Closed>());
  }
  /// Sink: queues v; Closed (and v dropped) when the receiver is gone.
  Result<void, Closed> start_send(T value) const {
    if (chan_ == nullptr || !chan_->push(std::move(value))) return Closed{};
    return {};
  }
  /// Sink: Ready at once; a queued value is already with the receiver.
  Poll<Result<void, Closed>> poll_flush(Context&) const { return ready(Result<void, Closed>()); }
  /// Sink: lets go of this sender, as destroying it would: the channel ends
  /// once every sender did. Sending through it after that fails with Closed.
  Poll<Result<void, Closed>> poll_close(Context&) {
    if (chan_ != nullptr) std::exchange(chan_, nullptr)->remove_sender();
    return ready(Result<void, Closed>());
  }

 private:
  template <class U>
  friend std::pair<UnboundedSender<U>, Receiver<U>> unbounded_channel();
  explicit UnboundedSender(detail::Chan<T>* chan) noexcept : Base(chan) {}
};

/// The receiving half of a channel, bounded or not. A Stream of T. Movable.
template <class T>
class [[nodiscard("streams do nothing unless polled")]] Receiver {
 public:
  using Item = T;

  Receiver(Receiver && other) noexcept : chan_(std::exchange(other.chan_, nullptr)) {}
  Receiver& operator=(Receiver other) noexcept {
    std::swap(chan_, other.chan_);
    return *this;
  }
  /// Closes the channel and drops the values still queued.
  ~Receiver() {
    if (chan_ == nullptr) return;
    chan_->close_rx();
    abandon_recv();  // a stream's poll_next may have left its waker
    std::optional<T> value;
    while (chan_->queue.pop(value, IfEmpty::Return) == PopState::Value) value.reset();
    chan_->release();
  }

 private:
  // Where a receive future (Recv, RecvMany) is: not polled yet, waiting
  // with its waker in the channel, or Ready.
  enum class State { Start, Waiting, Done };

  // What both receive futures do with one poll's `result`: Pending leaves
  // the waker in the channel; Ready after waiting takes it back, since the
  // send woke it with wake_by_ref, so no waker outlives its future (rule 5).
  template <class R>
  Poll<R> settle(State & state, Poll<R> result) {
    if (result.is_pending()) {
      state = State::Waiting;
      return pending;
    }
    if (state == State::Waiting) abandon_recv();
    state = State::Done;
    return result;
  }

 public:
  /// The future of recv(): the next value, or nullopt once every sender is
  /// gone (or the receiver closed) and the queue is drained.
  class [[nodiscard("futures do nothing unless polled")]] Recv {
   public:
    using Output = std::optional<T>;
    Recv(Recv && other) noexcept : receiver_(other.receiver_), state_(std::exchange(other.state_, State::Done)) {}
    Recv& operator=(Recv&&) = delete;
    /// A receive that waited takes its waker back from the channel (rule 5).
    ~Recv() {
      if (state_ == State::Waiting) receiver_->abandon_recv();
    }

    /// Pending until it completes, with the waker of this poll stored (rule 2).
    Poll<std::optional<T>> poll(Context & cx) {
      POLLUX_CHECK_NOT_DONE(Recv, state_ != State::Done);
      return receiver_->settle(state_, receiver_->poll_recv(cx));
    }

   private:
    friend class Receiver;
    explicit Recv(Receiver & receiver) noexcept : receiver_(&receiver) {}
    Receiver* receiver_;
    State state_ = State::Start;
  };

  /// Waits for the next value (borrows the receiver).
  Recv recv() {
    check();
    return Recv(*this);
  }

  /// Polls for the next value: what recv() and the Stream do.
  Poll<std::optional<T>> poll_recv(Context & cx) {
    check();
    std::optional<T> value;
    PopState state = chan_->queue.pop(value, IfEmpty::Return);
    if (state == PopState::Empty) {
      chan_->rx_waker.register_waker(cx.waker());
      state = chan_->queue.pop(value, IfEmpty::MarkWaiting);  // marks the slot, then looks once more
      if (state == PopState::Empty) return pending;
      (void)chan_->rx_waker.take();  // not needed after all: no waker outlives its future (rule 5)
    }
    if (state == PopState::Closed) return ready(std::optional<T>());
    if (chan_->permits) chan_->permits->release(1);
    return ready(std::move(value));
  }
  /// The Stream of received values; ends like recv().
  Poll<std::optional<T>> poll_next(Context & cx) { return poll_recv(cx); }

  /// The future of recv_many(): how many values it appended to the buffer.
  class [[nodiscard("futures do nothing unless polled")]] RecvMany {
   public:
    using Output = std::size_t;
    RecvMany(RecvMany && other) noexcept
        : receiver_(other.receiver_),
          buffer_(other.buffer_),
          limit_(other.limit_),
          state_(std::exchange(other.state_, State::Done)) {}
    RecvMany& operator=(RecvMany&&) = delete;
    /// A receive that waited takes its waker back from the channel (rule 5).
    ~RecvMany() {
      if (state_ == State::Waiting) receiver_->abandon_recv();
    }

    /// Pending until a value is queued or the channel ends; then takes up
    /// to the limit of what is queued, in order, in this one poll.
    Poll<std::size_t> poll(Context & cx) {
      POLLUX_CHECK_NOT_DONE(RecvMany, state_ != State::Done);
      return receiver_->settle(state_, receiver_->poll_recv_many(cx, *buffer_, limit_));
    }

   private:
    friend class Receiver;
    RecvMany(Receiver & receiver, std::vector<T> & buffer, std::size_t limit) noexcept
        : receiver_(&receiver), buffer_(&buffer), limit_(limit) {}
    Receiver* receiver_;
    std::vector<T>* buffer_;
    std::size_t limit_;
    State state_ = State::Start;
  };

  /// Waits for at least one value, then appends to `buffer` every value
  /// queued, up to `limit`, as tokio's recv_many: one wake and one poll for
  /// a burst. Ready with how many it appended: 0 only when `limit` is 0, or
  /// once every sender is gone and the queue is drained. Cancel-safe: a
  /// future destroyed before Ready took nothing. Borrows both arguments.
  RecvMany recv_many(std::vector<T> & buffer, std::size_t limit) {
    check();
    return RecvMany(*this, buffer, limit);
  }

  /// What recv_many() polls.
  Poll<std::size_t> poll_recv_many(Context & cx, std::vector<T> & buffer, std::size_t limit) {
    if (limit == 0) return ready(std::size_t{0});
    Poll<std::optional<T>> first = poll_recv(cx);
    if (first.is_pending()) return pending;
    if (!first.value()) return ready(std::size_t{0});
    buffer.push_back(std::move(*first.value()));
    std::size_t taken = 1;
    std::optional<T> value;
    while (taken < limit && chan_->queue.pop(value, IfEmpty::Return) == PopState::Value) {
      buffer.push_back(std::move(*value));
      value.reset();
      ++taken;
    }
    // The first value's permit went back in poll_recv; the rest in one step.
    if (chan_->permits && taken > 1) chan_->permits->release(taken - 1);
    return ready(taken);
  }

  /// The next value now, or Empty, or Closed (the channel has ended).
  Result<T, TryRecvError> try_recv() {
    check();
    std::optional<T> value;
    switch (chan_->queue.pop(value, IfEmpty::Return)) {
      case PopState::Value:
        if (chan_->permits) chan_->permits->release(1);
        return std::move(*value);
      case PopState::Empty:
        return TryRecvError::Empty;
      case PopState::Closed:
        break;
    }
    return TryRecvError::Closed;
  }

  /// Closes the channel: every send fails from now on (waiting senders
  /// too), while what is queued, or being queued, can still be received.
  void close() {
    check();
    chan_->close_rx();
  }

 private:
  using PopState = typename pollux::detail::BlockQueue<T>::PopState;
  using IfEmpty = typename pollux::detail::BlockQueue<T>::IfEmpty;
  template <class U>
  friend std::pair<Sender<U>, Receiver<U>> channel(std::size_t capacity);
  template <class U>
  friend std::pair<UnboundedSender<U>, Receiver<U>> unbounded_channel();
  explicit Receiver(detail::Chan<T> * chan) noexcept : chan_(chan) {}
  void check() const {
    if (chan_ == nullptr) throw std::logic_error("pollux::mpsc: use of a moved-from receiver");
  }
  // Drops the waker a receive left in the channel: what a receive future
  // does when it completes after waiting, or is destroyed while waiting.
  void abandon_recv() noexcept {
    if (chan_ != nullptr) (void)chan_->rx_waker.take();
  }

  detail::Chan<T>* chan_;
};

/// A bounded channel's sender as a Sink (tokio-util's PollSender):
/// poll_ready waits for room and keeps the slot it got, start_send fills
/// it. Like a future, it is not moved once poll_ready answered Pending
/// (it holds its place in the queue of senders waiting for room, rule 4).
/// Destroyed with a slot reserved, it gives the slot back.
template <class T>
class PollSender {
 public:
  /// The receiver is gone or closed, or this sink was closed.
  using Error = Closed;

  /// A sink that sends through `sender`.
  explicit PollSender(Sender<T> sender) noexcept : sender_(std::move(sender)) {}
  /// Takes over `other`'s sender and reserved slot (only before poll_ready
  /// answered Pending, rule 4).
  PollSender(PollSender&& other) noexcept
      : sender_(std::move(other.sender_)), reserved_(std::exchange(other.reserved_, false)) {}
  PollSender& operator=(PollSender&&) = delete;
  ~PollSender() { give_back(); }

  /// Sink: Ready once a slot of the channel is this sink's, Pending (the
  /// waker stored) while the channel is full, Closed once the receiver is gone.
  Poll<Result<void, Closed>> poll_ready(Context& cx) {
    if (reserved_) return ready(Result<void, Closed>());
    if (sender_.chan_ == nullptr) return ready(Result<void, Closed>(Closed{}));
    if (!acquire_) acquire_.emplace(*sender_.chan_->permits, 1);
    Poll<bool> got = acquire_->poll(cx);
    if (got.is_pending()) return pending;
    acquire_.reset();
    if (!got.value()) return ready(Result<void, Closed>(Closed{}));
    reserved_ = true;
    return ready(Result<void, Closed>());
  }
  /// Sink: queues v in the slot poll_ready reserved; Closed (v dropped) when
  /// the receiver went meanwhile. Without a reserved slot: std::logic_error.
  Result<void, Closed> start_send(T value) {
    if (!reserved_) throw std::logic_error("pollux::mpsc::PollSender: start_send without a successful poll_ready");
    reserved_ = false;
    if (!sender_.chan_->push(std::move(value))) {
      sender_.chan_->permits->release(1);
      return Closed{};
    }
    return {};
  }
  /// Sink: Ready at once; a queued value is already with the receiver.
  Poll<Result<void, Closed>> poll_flush(Context&) { return ready(Result<void, Closed>()); }
  /// Sink: gives a reserved slot back and lets go of the sender; the
  /// channel ends once every sender did.
  Poll<Result<void, Closed>> poll_close(Context&) {
    give_back();
    acquire_.reset();
    Sender<T> gone = std::move(sender_);
    return ready(Result<void, Closed>());
  }

 private:
  void give_back() noexcept {
    if (reserved_) sender_.chan_->permits->release(1);
    reserved_ = false;
  }

  Sender<T> sender_;
  std::optional<pollux::detail::AcquireFuture> acquire_;
  bool reserved_ = false;
};

/// A bounded channel holding at most `capacity` values (at least 1: throws
/// std::invalid_argument for 0).
template <class T>
std::pair<Sender<T>, Receiver<T>> channel(std::size_t capacity) {
  if (capacity == 0) throw std::invalid_argument("pollux::mpsc::channel: the capacity must be at least 1");
  auto* chan = std::make_unique<detail::Chan<T>>(capacity).release();
  return {Sender<T>(chan), Receiver<T>(chan)};
}

/// A channel whose send never waits.
template <class T>
std::pair<UnboundedSender<T>, Receiver<T>> unbounded_channel() {
  auto* chan = std::make_unique<detail::Chan<T>>(0).release();
  return {UnboundedSender<T>(chan), Receiver<T>(chan)};
}

}  // namespace pollux::mpsc
