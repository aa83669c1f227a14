// oneshot<T>(): a channel for exactly one value, from one Sender to one
// Receiver, across threads. The Receiver is a future of std::optional<T>:
// the value, or nullopt when the Sender was destroyed without sending.
// One allocation per channel (both ends share it); no lock: the receiver's
// waker sits in an AtomicWaker, so the most recent poll's waker is the one a
// send wakes (rule 2), whichever thread sends.
// Cancellation safety: destroying the Receiver drops a value sent but not
// received, and makes later sends fail. To keep a receive alive across a
// lost select, select over by_ref(receiver).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <utility>

#include "pollux/core/atomic_waker.hpp"
#include "pollux/core/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/wake.hpp"

namespace pollux {

namespace detail {
// What happened to the channel; each bit is set once, by one side.
// Who may touch `value`: the sender before it sets kValueSent, the receiver
// after it saw kValueSent, and whoever frees the channel.
template <class T>
struct OneshotChannel : RefCounted<OneshotChannel<T>> {
  static constexpr std::uint8_t kValueSent = 1;
  static constexpr std::uint8_t kSenderGone = 2;    // destroyed without sending
  static constexpr std::uint8_t kReceiverGone = 4;  // later sends fail

  std::atomic<std::uint8_t> state{0};
  AtomicWaker receiver_waker;
  std::optional<T> value;
};
}  // namespace detail

template <class T>
class OneshotReceiver;

template <class T>
class OneshotSender {
  using Channel = detail::OneshotChannel<T>;

 public:
  OneshotSender(OneshotSender&&) noexcept = default;
  OneshotSender& operator=(OneshotSender&& other) noexcept {
    if (this != &other) {
      close();
      channel_ = std::move(other.channel_);
    }
    return *this;
  }
  ~OneshotSender() { close(); }

  // Sends the value and wakes the receiver. Returns false, dropping the
  // value, when the receiver is gone. Consumes the sender either way.
  // Throws std::logic_error when the sender was already used or moved from.
  bool send(T value) {
    if (!channel_) throw std::logic_error("pollux::OneshotSender::send: the sender was already used or moved from");
    Arc<Channel> channel = std::move(channel_);
    if (channel->state.load(std::memory_order_acquire) & Channel::kReceiverGone) return false;
    channel->value.emplace(std::move(value));
    std::uint8_t before = channel->state.fetch_or(Channel::kValueSent, std::memory_order_acq_rel);
    if (before & Channel::kReceiverGone) return false;  // the value goes with the channel
    channel->receiver_waker.wake();
    return true;
  }

  // True once the receiver is gone: a send would fail.
  bool is_closed() const noexcept {
    return !channel_ || (channel_->state.load(std::memory_order_acquire) & Channel::kReceiverGone);
  }

 private:
  template <class U>
  friend std::pair<OneshotSender<U>, OneshotReceiver<U>> oneshot();
  explicit OneshotSender(Arc<Channel> channel) noexcept : channel_(std::move(channel)) {}

  // Unsent: tell the receiver no value will come. The wake happens while we
  // still hold our reference, so it never touches a freed channel.
  void close() noexcept {
    if (!channel_) return;
    channel_->state.fetch_or(Channel::kSenderGone, std::memory_order_acq_rel);
    channel_->receiver_waker.wake();
    channel_.reset();
  }

  Arc<Channel> channel_;
};

template <class T>
class OneshotReceiver {
  using Channel = detail::OneshotChannel<T>;

 public:
  using Output = std::optional<T>;

  OneshotReceiver(OneshotReceiver&&) noexcept = default;
  OneshotReceiver& operator=(OneshotReceiver&& other) noexcept {
    if (this != &other) {
      close();
      channel_ = std::move(other.channel_);
    }
    return *this;
  }
  ~OneshotReceiver() { close(); }

  Poll<std::optional<T>> poll(Context& cx) {
    POLLUX_CHECK_NOT_DONE(OneshotReceiver, channel_ != nullptr);
    if (auto result = try_take(); result.is_ready()) return result;
    channel_->receiver_waker.register_waker(cx.waker());
    // A send between the first look and the registration woke the old waker
    // (or none): look again now that the new one is in place.
    return try_take();
  }

 private:
  template <class U>
  friend std::pair<OneshotSender<U>, OneshotReceiver<U>> oneshot();
  explicit OneshotReceiver(Arc<Channel> channel) noexcept : channel_(std::move(channel)) {}

  Poll<std::optional<T>> try_take() {
    std::uint8_t state = channel_->state.load(std::memory_order_acquire);
    if (state & Channel::kValueSent) {
      Poll<std::optional<T>> result(std::in_place, std::move(channel_->value));
      close();
      return result;
    }
    if (state & Channel::kSenderGone) {
      close();
      return Poll<std::optional<T>>(std::in_place, std::nullopt);
    }
    return pending;
  }

  void close() noexcept {
    if (!channel_) return;
    channel_->state.fetch_or(Channel::kReceiverGone, std::memory_order_acq_rel);
    channel_->receiver_waker.take();  // leave no waker behind (rule 5)
    channel_.reset();
  }

  Arc<Channel> channel_;
};

template <class T>
std::pair<OneshotSender<T>, OneshotReceiver<T>> oneshot() {
  auto channel = make_arc<detail::OneshotChannel<T>>();
  return {OneshotSender<T>(channel), OneshotReceiver<T>(std::move(channel))};
}

}  // namespace pollux
