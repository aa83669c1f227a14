// UdpSocket: datagrams. bind(addr) binds at once; send_to and recv_from are
// futures of one datagram each. Both are cancel-safe: destroyed before
// Ready, nothing was sent or taken, and the waker is taken back (rule 5).
// A datagram longer than recv_from's buffer is cut to it (the kernel drops
// the rest), as with recvfrom(2).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <span>
#include <string_view>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/io/detail/io_source.hpp"
#include "pollux/io/socket_addr.hpp"

namespace pollux {

/// Datagrams.
class UdpSocket {
 public:
  class SendTo;
  class RecvFrom;

  /// Throws std::system_error naming the address.
  static UdpSocket bind(const SocketAddr& addr);
  /// bind() of an address in text ("127.0.0.1:0").
  static UdpSocket bind(std::string_view addr) { return bind(SocketAddr::parse(addr)); }

  UdpSocket(UdpSocket&&) noexcept = default;
  UdpSocket& operator=(UdpSocket&&) noexcept = default;

  /// A future of the number of bytes sent (all of them: a datagram is whole).
  SendTo send_to(std::span<const std::byte> bytes, const SocketAddr& to) noexcept;
  /// send_to() of chars.
  SendTo send_to(std::span<const char> bytes, const SocketAddr& to) noexcept;
  /// A future of the datagram's length and its sender.
  RecvFrom recv_from(std::span<std::byte> buffer) noexcept;
  /// recv_from() into chars.
  RecvFrom recv_from(std::span<char> buffer) noexcept;

  /// The address it is bound to (with the port the kernel chose for port 0).
  SocketAddr local_addr() const noexcept { return local_; }
  /// The socket's file descriptor; this object still owns it.
  int native_handle() const noexcept { return source_.fd(); }

  /// What send_to() polls.
  Poll<std::size_t> poll_send_to(Context& cx, std::span<const std::byte> bytes, const SocketAddr& to);
  /// What recv_from() polls.
  Poll<std::pair<std::size_t, SocketAddr>> poll_recv_from(Context& cx, std::span<std::byte> buffer);
  /// A future going away lets go of its waker for `direction` (rule 5).
  void abandon(detail::Direction direction) noexcept { source_.abandon(direction); }

 private:
  UdpSocket(detail::IoSource source, const SocketAddr& local) noexcept : source_(std::move(source)), local_(local) {}

  detail::IoSource source_;
  SocketAddr local_;
};

/// What send_to(bytes, addr) returns: a future of the number of bytes sent.
class [[nodiscard("futures do nothing unless polled")]] UdpSocket::SendTo {
 public:
  using Output = std::size_t;

  /// What send_to() makes.
  SendTo(UdpSocket & socket, std::span<const std::byte> bytes, const SocketAddr& to) noexcept
      : socket_(&socket), bytes_(bytes), to_(to) {}
  SendTo(SendTo && other) noexcept
      : socket_(other.socket_),
        bytes_(other.bytes_),
        to_(other.to_),
        state_(std::exchange(other.state_, State::Done)) {}
  SendTo& operator=(SendTo&&) = delete;
  ~SendTo() {
    if (state_ == State::Waiting) socket_->abandon(detail::Direction::Write);
  }

  /// Ready with the bytes sent, once the datagram went out.
  Poll<std::size_t> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(SendTo, state_ != State::Done);
    Poll<std::size_t> result = socket_->poll_send_to(cx, bytes_, to_);
    state_ = result.is_ready() ? State::Done : State::Waiting;
    return result;
  }

 private:
  enum class State { Start, Waiting, Done };

  UdpSocket* socket_;
  std::span<const std::byte> bytes_;
  SocketAddr to_;
  State state_ = State::Start;
};

/// What recv_from(buffer) returns: a future of the datagram's length and its sender.
class [[nodiscard("futures do nothing unless polled")]] UdpSocket::RecvFrom {
 public:
  using Output = std::pair<std::size_t, SocketAddr>;

  /// What recv_from() makes.
  RecvFrom(UdpSocket & socket, std::span<std::byte> buffer) noexcept : socket_(&socket), buffer_(buffer) {}
  RecvFrom(RecvFrom && other) noexcept
      : socket_(other.socket_), buffer_(other.buffer_), state_(std::exchange(other.state_, State::Done)) {}
  RecvFrom& operator=(RecvFrom&&) = delete;
  ~RecvFrom() {
    if (state_ == State::Waiting) socket_->abandon(detail::Direction::Read);
  }

  /// Ready with the size of the datagram received and its sender.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(RecvFrom, state_ != State::Done);
    Poll<Output> result = socket_->poll_recv_from(cx, buffer_);
    state_ = result.is_ready() ? State::Done : State::Waiting;
    return result;
  }

 private:
  enum class State { Start, Waiting, Done };

  UdpSocket* socket_;
  std::span<std::byte> buffer_;
  State state_ = State::Start;
};

inline UdpSocket::SendTo UdpSocket::send_to(std::span<const std::byte> bytes, const SocketAddr& to) noexcept {
  return SendTo(*this, bytes, to);
}
inline UdpSocket::SendTo UdpSocket::send_to(std::span<const char> bytes, const SocketAddr& to) noexcept {
  return SendTo(*this, std::as_bytes(bytes), to);
}
inline UdpSocket::RecvFrom UdpSocket::recv_from(std::span<std::byte> buffer) noexcept {
  return RecvFrom(*this, buffer);
}
inline UdpSocket::RecvFrom UdpSocket::recv_from(std::span<char> buffer) noexcept {
  return RecvFrom(*this, std::as_writable_bytes(buffer));
}

}  // namespace pollux
