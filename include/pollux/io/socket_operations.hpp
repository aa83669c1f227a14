// The operations of the socket types, each written once for every socket
// that has the poll member it calls (TcpStream and UnixStream, TcpListener
// and UnixListener, UdpSocket and UnixDatagram), on either backend: the
// socket's poll member has already chosen it. IoFuture<Op> makes each one
// a future; the sockets name those futures (TcpListener::Accept, ...).
// Every op keeps a pointer to its socket: the socket must outlive it and
// must not move while it waits.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <span>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/io/interest.hpp"
#include "pollux/io/io_future.hpp"

namespace pollux {

/// Waiting until socket S is readable (`Interest::Read`) or writable,
/// without reading or writing: S::poll_read_ready or S::poll_write_ready.
template <class S>
class ReadyOp {
 public:
  using Output = void;

  /// The wait on `socket` for `interest`.
  ReadyOp(S& socket, Interest interest) noexcept : socket_(&socket), interest_(interest) {}

  /// Ready once the socket is ready for the interest.
  Poll<void> poll(Context& cx) {
    return interest_ == Interest::Read ? socket_->poll_read_ready(cx) : socket_->poll_write_ready(cx);
  }
  /// Gives the socket's waker for the interest back.
  void abandon() noexcept { socket_->abandon(interest_); }

 private:
  S* socket_;
  Interest interest_;
};

/// Copying what socket S has received without taking it: S::poll_peek.
template <class S>
class PeekOp {
 public:
  using Output = std::size_t;

  /// The peek into `buffer`.
  PeekOp(S& socket, std::span<std::byte> buffer) noexcept : socket_(&socket), buffer_(buffer) {}

  /// Ready with the bytes copied, which stay queued for the next read.
  Poll<std::size_t> poll(Context& cx) { return socket_->poll_peek(cx, buffer_); }
  /// Gives the socket's read waker back.
  void abandon() noexcept { socket_->abandon(Interest::Read); }

 private:
  S* socket_;
  std::span<std::byte> buffer_;
};

/// One gathered write of several buffers: S::poll_write_vectored.
template <class S>
class WriteVectoredOp {
 public:
  using Output = std::size_t;

  /// The write of `buffers`, in order; they must outlive the operation.
  WriteVectoredOp(S& socket, std::span<const std::span<const std::byte>> buffers) noexcept
      : socket_(&socket), buffers_(buffers) {}

  /// Ready with how many bytes of the buffers, in order, the socket took.
  Poll<std::size_t> poll(Context& cx) { return socket_->poll_write_vectored(cx, buffers_); }
  /// Gives the socket's write waker back.
  void abandon() noexcept { socket_->abandon(Interest::Write); }

 private:
  S* socket_;
  std::span<const std::span<const std::byte>> buffers_;
};

/// Taking the next connection off listener L's backlog: L::poll_accept.
template <class L>
class AcceptOp {
 public:
  /// What L::poll_accept is Ready with.
  using Output = typename decltype(std::declval<L&>().poll_accept(std::declval<Context&>()))::value_type;

  /// The accept on `listener`.
  explicit AcceptOp(L& listener) noexcept : listener_(&listener) {}

  /// Ready with the connection (and, for TCP, its peer's address).
  Poll<Output> poll(Context& cx) { return listener_->poll_accept(cx); }
  /// Gives the listener's waker back; a connection not yet taken stays in the backlog.
  void abandon() noexcept { listener_->abandon(Interest::Read); }

 private:
  L* listener_;
};

/// Sending one datagram from socket S to an address of type `Addr`
/// (kept in the operation): S::poll_send_to.
template <class S, class Addr>
class SendToOp {
 public:
  using Output = std::size_t;

  /// The datagram `bytes` to `to`.
  SendToOp(S& socket, std::span<const std::byte> bytes, Addr to)
      : socket_(&socket), bytes_(bytes), to_(std::move(to)) {}

  /// Ready with the bytes sent: all of them, a datagram is whole.
  Poll<std::size_t> poll(Context& cx) { return socket_->poll_send_to(cx, bytes_, to_); }
  /// Gives the socket's write waker back.
  void abandon() noexcept { socket_->abandon(Interest::Write); }

 private:
  S* socket_;
  std::span<const std::byte> bytes_;
  Addr to_;
};

/// Receiving one datagram and its sender on socket S: S::poll_recv_from.
template <class S>
class RecvFromOp {
 public:
  /// The datagram's length and its sender's address.
  using Output = typename decltype(std::declval<S&>().poll_recv_from(std::declval<Context&>(),
                                                                     std::declval<std::span<std::byte>>()))::value_type;

  /// The receive into `buffer`.
  RecvFromOp(S& socket, std::span<std::byte> buffer) noexcept : socket_(&socket), buffer_(buffer) {}

  /// Ready with the datagram's length and its sender.
  Poll<Output> poll(Context& cx) { return socket_->poll_recv_from(cx, buffer_); }
  /// Gives the socket's read waker back.
  void abandon() noexcept { socket_->abandon(Interest::Read); }

 private:
  S* socket_;
  std::span<std::byte> buffer_;
};

/// Receiving one datagram on socket S, without its sender: S::poll_recv.
template <class S>
class RecvOp {
 public:
  using Output = std::size_t;

  /// The receive into `buffer`.
  RecvOp(S& socket, std::span<std::byte> buffer) noexcept : socket_(&socket), buffer_(buffer) {}

  /// Ready with the datagram's length.
  Poll<std::size_t> poll(Context& cx) { return socket_->poll_recv(cx, buffer_); }
  /// Gives the socket's read waker back.
  void abandon() noexcept { socket_->abandon(Interest::Read); }

 private:
  S* socket_;
  std::span<std::byte> buffer_;
};

}  // namespace pollux
