// UdpSocket: datagrams. bind(addr) binds at once; send_to and recv_from are
// futures of one datagram each. Both are cancel-safe: destroyed before
// Ready, nothing was sent or taken, and the waker is taken back (rule 5).
// A datagram longer than recv_from's buffer is cut to it (the kernel drops
// the rest), as with recvfrom(2).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <span>
#include <string_view>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/io/detail/io_source.hpp"
#include "pollux/io/socket_addr.hpp"
#include "pollux/io/socket_operations.hpp"

namespace pollux {

/// Datagrams.
class UdpSocket {
 public:
  /// What send_to() returns: a future of the number of bytes sent.
  using SendTo = IoFuture<SendToOp<UdpSocket, SocketAddr>>;
  /// What recv_from() returns: a future of the datagram's length and its sender.
  using RecvFrom = IoFuture<RecvFromOp<UdpSocket>>;

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
  /// A future that waited on `interest` going away lets go of its waker (rule 5).
  void abandon(Interest interest) noexcept { source_.abandon(interest); }

 private:
  UdpSocket(detail::IoSource source, const SocketAddr& local) noexcept : source_(std::move(source)), local_(local) {}

  detail::IoSource source_;
  SocketAddr local_;
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
