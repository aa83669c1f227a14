// oneshot::channel<T>(): a channel for exactly one value, from one Sender to one
// Receiver, across threads. The Receiver is a future of Result<T, Closed>:
// the value, or Closed when the Sender was destroyed without sending.
// One allocation per channel (from the thread's slab), or none when it is
// made from a oneshot::Slot<T> that the program declares (the embedded
// profile's only way). No lock: one atomic state word says what has
// happened and who may touch the value and the receiver's waker, so a send
// wakes the waker of the receiver's most recent poll (rule 2).
// Cancellation safety: destroying the Receiver drops a value sent but not
// received, and makes later sends fail. To keep a receive alive across a
// lost select, select over by_ref(receiver). The Sender's closed() is a
// future that completes when the receiver is gone, so a producer can stop
// work nobody waits for; destroying it takes its waker back.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <utility>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/diagnose.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/panic.hpp"
#include "pollux/core/result.hpp"
#if !defined(POLLUX_SINGLE_CORE)
#include "pollux/core/slab.hpp"  // channel<T>() allocates; a Slot does not
#endif

namespace pollux {

namespace detail {
/// The state bits; each is set once, by the side named:
///   kWakerSet      receiver: `waker` holds its waker. While the bit is set
///                  the receiver does not write `waker`; the sender may read it.
///   kValueSent     sender: `value` holds the value, which only the receiver
///                  touches from now on.
///   kClosed        sender: destroyed without sending.
///   kSenderGone    sender: it touches the channel no more.
///   kReceiverGone  receiver: it touches the channel no more.
///   kTxWakerSet    sender (its closed() future): `tx_waker` holds its waker;
///                  the same rules as kWakerSet, with the sides swapped.
///   kRxClosed      receiver: it is going (set before kReceiverGone, and
///                  before it wakes `tx_waker`).
///   kFree          kValueSent and kClosed together, which no channel ever
///                  reaches: a Slot's channel that is not in use. Stored by
///                  whoever freed the last one; Slot::channel() swaps it
///                  for 0.
/// The sender sets kValueSent or kClosed first, wakes, and then kSenderGone:
/// the receiver cannot free the channel while the sender reads the waker.
/// Likewise the receiver sets kRxClosed, wakes the sender's closed(), and
/// then kReceiverGone.
/// Whoever sets the second of the two "gone" bits frees the channel.
/// `kInSlot`: the channel lives in a oneshot::Slot, and freeing it makes
/// the slot ready for the next one (decided when compiling: a channel of
/// the slab pays nothing for slots).
template <class T, bool kInSlot = false>
struct OneshotChannel {
  static constexpr std::uint8_t kWakerSet = 1;
  static constexpr std::uint8_t kValueSent = 2;
  static constexpr std::uint8_t kClosed = 4;
  static constexpr std::uint8_t kDone = kValueSent | kClosed;
  static constexpr std::uint8_t kSenderGone = 8;
  static constexpr std::uint8_t kReceiverGone = 16;
  static constexpr std::uint8_t kTxWakerSet = 32;
  static constexpr std::uint8_t kRxClosed = 64;
  static constexpr std::uint8_t kFree = kValueSent | kClosed;

  /// A channel of the slab (`initial` 0), or a Slot's (kFree).
  constexpr explicit OneshotChannel(std::uint8_t initial = 0) noexcept : state(initial) {}

  pollux::detail::Atomic<std::uint8_t> state;
  // What the state word publishes: each is touched by one side at a time,
  // as its bits say, and a model build checks that the orders keep it so.
  pollux::detail::TrackedCell<Waker> waker;
  pollux::detail::TrackedCell<Waker> tx_waker;
  pollux::detail::TrackedCell<std::optional<T>> value;

  // Marks one side gone; frees the channel when the other side already is.
  static void leave(OneshotChannel* channel, std::uint8_t gone, std::uint8_t other_gone) noexcept {
    if (channel->state.fetch_or(gone, std::memory_order_acq_rel) & other_gone) free(channel);
  }
#if !defined(POLLUX_SINGLE_CORE)
  static OneshotChannel* make() { return slab_new<OneshotChannel>(); }
#endif
  // Called by the last side, which alone touches the channel now. A Slot's
  // channel is emptied, and kFree published (release) last, so the next
  // Slot::channel() finds it clean.
  static void free(OneshotChannel* channel) noexcept {
    if constexpr (kInSlot) {
      channel->value.write().reset();
      channel->waker.write() = Waker{};
      channel->tx_waker.write() = Waker{};
      channel->state.store(kFree, std::memory_order_release);
    } else {
#if !defined(POLLUX_SINGLE_CORE)
      slab_delete(channel);
#endif
    }
  }
  // The receiver goes: kRxClosed, wake a waiting closed(), then kReceiverGone.
  static void leave_receiver(OneshotChannel* channel) noexcept {
    std::uint8_t before = channel->state.fetch_or(kRxClosed, std::memory_order_acq_rel);
    if ((before & (kTxWakerSet | kSenderGone)) == kTxWakerSet) channel->tx_waker.read().wake_by_ref();
    leave(channel, kReceiverGone, kSenderGone);
  }
};
}  // namespace detail

namespace oneshot {

template <class T, bool kInSlot = false>
class Receiver;
template <class T>
class Slot;

/// The sending half of oneshot::channel<T>() (kInSlot: of a Slot's
/// channel): send(v) once, from any thread.
template <class T, bool kInSlot = false>
class Sender {
  using Channel = detail::OneshotChannel<T, kInSlot>;

 public:
  Sender(Sender&& other) noexcept : channel_(std::exchange(other.channel_, nullptr)) {}
  Sender& operator=(Sender&& other) noexcept {
    if (this != &other) {
      if (channel_) complete(Channel::kClosed);
      channel_ = std::exchange(other.channel_, nullptr);
    }
    return *this;
  }
  ~Sender() {
    if (channel_) complete(Channel::kClosed);
  }

  /// Sends the value and wakes the receiver; SendError gives the value
  /// back when the receiver is gone. Consumes the sender either way.
  /// Throws std::logic_error when the sender was already used or moved from
  /// (panics where exceptions are off).
  Result<void, SendError<T>> send(T value) {
    if (!channel_) {
      detail::raise<std::logic_error>("pollux::oneshot::Sender::send: the sender was already used or moved from");
    }
    if (channel_->state.load(std::memory_order_acquire) & Channel::kReceiverGone) {
      Channel::free(std::exchange(channel_, nullptr));  // the receiver left for good: we are last
      return SendError<T>{std::move(value)};
    }
    channel_->value.write().emplace(std::move(value));
    std::optional<T> refused;
    if (complete(Channel::kValueSent, &refused)) return {};
    return SendError<T>{std::move(*refused)};
  }

  /// True once the receiver is gone: a send would fail.
  bool is_closed() const noexcept {
    return !channel_ || (channel_->state.load(std::memory_order_acquire) & Channel::kRxClosed);
  }

  /// The future of closed(): Ready once the receiver is gone (or once the
  /// sender was used: then there is nothing left to wait for). It borrows
  /// the sender, which must stay where it is while the future lives.
  class [[nodiscard("futures do nothing unless polled")]] ClosedFuture {
   public:
    using Output = void;
    ClosedFuture(ClosedFuture && other) noexcept : sender_(std::exchange(other.sender_, nullptr)) {}
    ClosedFuture& operator=(ClosedFuture&&) = delete;
    ~ClosedFuture() {
      if (sender_ != nullptr && sender_->channel_ != nullptr) drop_tx_waker(sender_->channel_);
    }

    /// Pending until it completes, with the waker of this poll stored (rule 2).
    Poll<void> poll(Context & cx) {
      Channel* channel = sender_->channel_;
      if (channel == nullptr) return ready();
      std::uint8_t state = channel->state.load(std::memory_order_acquire);
      if (state & Channel::kRxClosed) return ready();
      if (state & Channel::kTxWakerSet) {
        if (channel->tx_waker.read().will_wake(cx.waker())) return pending;
        state = channel->state.fetch_and(static_cast<std::uint8_t>(~Channel::kTxWakerSet), std::memory_order_acq_rel);
        if (state & Channel::kRxClosed) return ready();
      }
      channel->tx_waker.write() = cx.waker();
      state = channel->state.fetch_or(Channel::kTxWakerSet, std::memory_order_acq_rel);
      if (state & Channel::kRxClosed) return ready();
      return pending;
    }

   private:
    friend class Sender;
    explicit ClosedFuture(const Sender* sender) noexcept : sender_(sender) {}
    const Sender* sender_;
  };

  /// Completes when the receiver is gone. Throws std::logic_error when the
  /// sender was already used or moved from (panics where exceptions are off).
  ClosedFuture closed() const {
    if (!channel_) {
      detail::raise<std::logic_error>("pollux::oneshot::Sender::closed: the sender was already used or moved from");
    }
    return ClosedFuture(this);
  }

 private:
  template <class U>
  friend std::pair<Sender<U>, Receiver<U>> channel();
  friend class Slot<T>;
  explicit Sender(Channel* channel) noexcept : channel_(channel) {}

  // Takes the waker of closed() back unless the receiver may be reading it
  // (then it goes with the channel), so no waker outlives its future (rule 5).
  static void drop_tx_waker(Channel* channel) noexcept {
    std::uint8_t state = channel->state.load(std::memory_order_acquire);
    if ((state & (Channel::kTxWakerSet | Channel::kRxClosed)) == Channel::kTxWakerSet) {
      state = channel->state.fetch_and(static_cast<std::uint8_t>(~Channel::kTxWakerSet), std::memory_order_acq_rel);
      if (!(state & Channel::kRxClosed)) channel->tx_waker.write() = Waker{};
    }
  }

  // Publishes `done` (kValueSent or kClosed), wakes a waiting receiver, then
  // leaves. Returns whether the receiver was still there.
  bool complete(std::uint8_t done, std::optional<T>* refused = nullptr) {
    Channel* channel = std::exchange(channel_, nullptr);
    drop_tx_waker(channel);
    std::uint8_t before = channel->state.fetch_or(done, std::memory_order_acq_rel);
    if ((before & (Channel::kWakerSet | Channel::kReceiverGone)) == Channel::kWakerSet) {
      channel->waker.read().wake_by_ref();
    }
    // The receiver left before the value landed: it never reads it, and the
    // leave below is the last one, so the value can be handed back first.
    if ((before & Channel::kReceiverGone) && refused != nullptr) refused->emplace(std::move(*channel->value.write()));
    Channel::leave(channel, Channel::kSenderGone, Channel::kReceiverGone);
    return !(before & Channel::kReceiverGone);
  }

  Channel* channel_;
};

/// The receiving half of oneshot::channel<T>() (kInSlot: of a Slot's
/// channel): a future of the value, or Closed when the sender was dropped
/// without sending.
template <class T, bool kInSlot>
class [[nodiscard("futures do nothing unless polled")]] Receiver {
  using Channel = detail::OneshotChannel<T, kInSlot>;

 public:
  using Output = Result<T, Closed>;

  Receiver(Receiver && other) noexcept : channel_(std::exchange(other.channel_, nullptr)) {}
  Receiver& operator=(Receiver&& other) noexcept {
    if (this != &other) {
      close();
      channel_ = std::exchange(other.channel_, nullptr);
    }
    return *this;
  }
  ~Receiver() { close(); }

  /// Pending until it completes, with the waker of this poll stored (rule 2).
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Receiver, channel_ != nullptr);
    std::uint8_t state = channel_->state.load(std::memory_order_acquire);
    if (state & Channel::kDone) return finish(state);
    if (state & Channel::kWakerSet) {
      if (channel_->waker.read().will_wake(cx.waker())) return pending;
      // Take the waker slot back before replacing the waker; if the sender
      // completed meanwhile it may be reading the old one: leave it be.
      state = channel_->state.fetch_and(static_cast<std::uint8_t>(~Channel::kWakerSet), std::memory_order_acq_rel);
      if (state & Channel::kDone) return finish(state);
    }
    channel_->waker.write() = cx.waker();
    state = channel_->state.fetch_or(Channel::kWakerSet, std::memory_order_acq_rel);
    if (state & Channel::kDone) return finish(state);  // completed before it saw our waker
    return pending;
  }

 private:
  template <class U>
  friend std::pair<Sender<U>, Receiver<U>> channel();
  friend class Slot<T>;
  explicit Receiver(Channel * channel) noexcept : channel_(channel) {}

  // The sender completed (state has kValueSent or kClosed): take the value
  // and leave. Once the sender is gone too, the channel is ours alone and
  // is freed without another atomic operation.
  Poll<Output> finish(std::uint8_t state) {
    Channel* channel = std::exchange(channel_, nullptr);
    Poll<Output> result = (state & Channel::kValueSent)
                              ? Poll<Output>(std::in_place, std::move(*channel->value.write()))
                              : Poll<Output>(std::in_place, Closed{});
    if (state & Channel::kSenderGone) {
      Channel::free(channel);
    } else {
      Channel::leave_receiver(channel);
    }
    return result;
  }

  // Destroyed while waiting: drop our waker now unless the sender may be
  // reading it (it then goes with the channel), so no waker of ours
  // outlives us (rule 5); later sends fail.
  void close() noexcept {
    Channel* channel = std::exchange(channel_, nullptr);
    if (channel == nullptr) return;
    std::uint8_t state = channel->state.load(std::memory_order_acquire);
    if ((state & (Channel::kWakerSet | Channel::kDone)) == Channel::kWakerSet) {
      state = channel->state.fetch_and(static_cast<std::uint8_t>(~Channel::kWakerSet), std::memory_order_acq_rel);
      if (!(state & Channel::kDone)) channel->waker.write() = Waker{};
    }
    Channel::leave_receiver(channel);
  }

  Channel* channel_;
};

#if !defined(POLLUX_SINGLE_CORE)
/// A channel for one value: its sender and its receiver.
template <class T>
std::pair<Sender<T>, Receiver<T>> channel() {
  auto* channel = detail::OneshotChannel<T>::make();
  return {Sender<T>(channel), Receiver<T>(channel)};
}
#else
/// Not in the embedded profile: a channel of its own needs the heap.
template <class T>
std::pair<Sender<T>, Receiver<T>> channel() {
  static_assert(detail::kFalse<T>,
                "pollux: oneshot::channel<T>() allocates, and the embedded profile has no heap: declare a "
                "oneshot::Slot<T> and make the channel in it (slot.channel())");
}
#endif

/// Storage for one oneshot channel at a time, declared by the program
/// (`constinit oneshot::Slot<int> slot;`): channel() makes a channel in it
/// with no allocation, and the slot takes the next one once the sender and
/// the receiver of the last are both gone. It must outlive them (a debug
/// build stops in its destructor when one is alive).
template <class T>
class Slot {
  using Channel = detail::OneshotChannel<T, true>;

 public:
  /// The sending half of a channel made in a Slot.
  using Sender = oneshot::Sender<T, true>;
  /// The receiving half of a channel made in a Slot.
  using Receiver = oneshot::Receiver<T, true>;

  /// An empty slot; constant, for constinit storage.
  constexpr Slot() noexcept : channel_(Channel::kFree) {}
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  ~Slot() {
    if (detail::check_contract && in_use()) {
      detail::contract_violation_text(
          "a oneshot::Slot was destroyed while the sender or the receiver of its channel lived: they point into it");
    }
  }

  /// A new channel in this slot, or nullopt while the sender or the
  /// receiver of the last one lives. Safe from any thread, and from an
  /// interrupt handler.
  std::optional<std::pair<Sender, Receiver>> channel() noexcept {
    std::uint8_t free = Channel::kFree;
    if (!channel_.state.compare_exchange_strong(free, 0, std::memory_order_acquire, std::memory_order_relaxed)) {
      return std::nullopt;
    }
    return std::pair<Sender, Receiver>{Sender(&channel_), Receiver(&channel_)};
  }

  /// True while the sender or the receiver of a channel made here lives.
  bool in_use() const noexcept { return channel_.state.load(std::memory_order_acquire) != Channel::kFree; }

 private:
  Channel channel_;
};

}  // namespace oneshot
}  // namespace pollux
