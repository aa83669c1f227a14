// Unix domain sockets: UnixListener and UnixStream (a byte stream, like
// TCP's), and UnixDatagram. An address is a filesystem path, or a name in
// Linux's abstract namespace when it starts with a NUL byte
// (std::string_view("\0name", 5)), which needs no file and vanishes with
// the socket. Binding to a path that exists is "address in use": remove a
// stale socket file first. Errors are std::system_error naming the
// operation and the path. The sockets register with the reactor on their
// first poll (rule 8) and their futures are cancel-safe as the TCP ones
// are: destroyed before Ready, they did nothing and take their waker back.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <optional>
#include <system_error>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/io/detail/accept_backoff.hpp"
#include "pollux/io/detail/io_source.hpp"
#include "pollux/io/detail/stream_socket.hpp"
#include "pollux/io/io_future.hpp"
#include "pollux/io/read.hpp"
#include "pollux/io/read_exact.hpp"
#include "pollux/io/socket_operations.hpp"
#include "pollux/io/tcp_stream.hpp"
#include "pollux/io/write.hpp"
#include "pollux/io/write_all.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {

/// A connected Unix stream socket: AsyncRead, AsyncWrite, AsyncShutdown.
class UnixStream {
 public:
  class ConnectOp;
  /// What connect() returns: a future of the connected stream.
  using Connect = IoFuture<ConnectOp>;
  /// What readable() and writable() return: a future that is Ready once the socket is.
  using Ready = IoFuture<ReadyOp<UnixStream>>;

  /// A future of a stream connected to the socket at `path`.
  static Connect connect(std::string_view path);
  /// Two streams connected to each other (socketpair).
  static std::pair<UnixStream, UnixStream> pair();

  /// Takes over a connected socket (what accept and connect do).
  UnixStream(detail::IoSource source, std::string peer) noexcept : socket_(std::move(source)), peer_(std::move(peer)) {}
  UnixStream(UnixStream&&) noexcept = default;
  UnixStream& operator=(UnixStream&&) noexcept = default;

  /// A future of one read into `buffer`: the number of bytes read, 0 at the end of the stream.
  auto read(std::span<std::byte> buffer) noexcept { return Read<UnixStream>(*this, buffer); }
  /// read() into a buffer of chars.
  auto read(std::span<char> buffer) noexcept { return read(std::as_writable_bytes(buffer)); }
  /// A future of one write of `bytes`: how many of them the socket took.
  auto write(std::span<const std::byte> bytes) noexcept { return Write<UnixStream>(*this, bytes); }
  /// write() of chars.
  auto write(std::span<const char> bytes) noexcept { return write(std::as_bytes(bytes)); }
  /// A future that fills `buffer` whole; the end of the stream before that throws std::system_error
  /// (io_errc::unexpected_eof).
  auto read_exact(std::span<std::byte> buffer) noexcept { return ReadExact<UnixStream>(*this, buffer); }
  /// read_exact() into a buffer of chars.
  auto read_exact(std::span<char> buffer) noexcept { return read_exact(std::as_writable_bytes(buffer)); }
  /// A future that writes all of `bytes`.
  auto write_all(std::span<const std::byte> bytes) noexcept { return WriteAll<UnixStream>(*this, bytes); }
  /// write_all() of chars.
  auto write_all(std::span<const char> bytes) noexcept { return write_all(std::as_bytes(bytes)); }

  /// Shuts down one or both directions now.
  void shutdown(Shutdown how = Shutdown::Write);
  /// The path of the socket at the other end ("" when it has none).
  const std::string& peer_path() const noexcept { return peer_; }
  /// The socket's file descriptor; this object still owns it.
  int native_handle() const noexcept { return socket_.fd(); }
  /// Closes the socket now (the destructor does otherwise); on io_uring,
  /// what the stream still holds goes to the kernel first.
  void close() noexcept { socket_.close(); }

  /// A future that is Ready once the socket has bytes to read (or its end, or an error).
  Ready readable() noexcept { return Ready(*this, Interest::Read); }
  /// A future that is Ready once the socket has room to write.
  Ready writable() noexcept { return Ready(*this, Interest::Write); }
  /// Ready once the socket is readable, else Pending with the waker of `cx` kept.
  Poll<void> poll_read_ready(Context& cx);
  /// Ready once the socket is writable, else Pending with the waker of `cx` kept.
  Poll<void> poll_write_ready(Context& cx);

  /// AsyncRead: reads what is there into `buffer`. Ready with the count (0 at the end of the
  /// stream), or Pending with the waker of `cx` kept until there is more to read.
  Poll<std::size_t> poll_read(Context& cx, std::span<std::byte> buffer);
  /// AsyncWrite: writes what fits of `bytes`. Ready with the count written, or Pending with the
  /// waker of `cx` kept until there is room.
  Poll<std::size_t> poll_write(Context& cx, std::span<const std::byte> bytes);
  /// AsyncRead / AsyncWrite: a future that waited on `interest` and is
  /// destroyed before it finished lets go of its waker here (rule 5).
  void abandon(Interest interest) noexcept { socket_.abandon(interest); }
  /// AsyncFlush: Ready once the kernel has every byte written: at once on
  /// epoll; on io_uring once the stream's send buffer is empty.
  Poll<void> poll_flush(Context& cx);
  /// AsyncShutdown: flushes, then shuts the writing direction down; the peer reads the end of the
  /// stream.
  Poll<void> poll_shutdown(Context& cx);

 private:
  // A result as the caller sees it: the count, or the error thrown, naming
  // `operation` and the peer.
  Poll<std::size_t> count(Poll<detail::SysResult> result, const char* operation, const char* preposition) const;

  detail::StreamSocket socket_;
  std::string peer_;
};

/// The operation of UnixStream::connect: opens a socket, connects it, and
/// waits while the connection is in progress (a full backlog). It owns the
/// socket until it is connected, so it has no waker to give back elsewhere.
class UnixStream::ConnectOp {
 public:
  using Output = UnixStream;

  /// The connection to the socket at `path`.
  explicit ConnectOp(std::string_view path) : path_(path) {}

  /// Ready with the connected stream, or throws the connection's error, naming the path.
  Poll<UnixStream> poll(Context& cx);
  /// Nothing to give back: the socket it waits on is its own, and closes with it.
  void abandon() noexcept {}

 private:
  UnixStream connected();

  std::string path_;
  std::optional<detail::IoSource> source_;  // the socket, once opened
};

inline UnixStream::Connect UnixStream::connect(std::string_view path) { return Connect(path); }

/// A listening Unix stream socket.
class UnixListener {
 public:
  /// What accept() returns: a future of the next connection.
  using Accept = IoFuture<AcceptOp<UnixListener>>;
  class Incoming;

  /// Binds and listens at `path` now (std::system_error naming it).
  static UnixListener bind(std::string_view path, int backlog = 1024);

  UnixListener(UnixListener&&) noexcept = default;
  UnixListener& operator=(UnixListener&&) noexcept = default;

  /// A future of the next connection.
  Accept accept() noexcept { return Accept(*this); }
  /// The connections as a Stream that never ends; it borrows the listener.
  Incoming incoming() noexcept;

  /// The path it listens at.
  const std::string& path() const noexcept { return path_; }
  /// The socket's file descriptor; this object still owns it.
  int native_handle() const noexcept { return source_.fd(); }

  /// What accept() polls.
  Poll<UnixStream> poll_accept(Context& cx);
  /// An accept() going away lets go of its waker (rule 5); accepting waits
  /// on Interest::Read.
  void abandon(Interest interest) noexcept { source_.abandon(interest); }

 private:
  UnixListener(detail::IoSource source, std::string path) noexcept
      : source_(std::move(source)), path_(std::move(path)) {}

  detail::IoSource source_;
  std::string path_;
};

/// The stream UnixListener::incoming returns. Like TcpListener's, it skips
/// a connection that failed in the backlog and pauses (without spinning)
/// while the process is out of descriptors or memory, reported once.
class [[nodiscard("streams do nothing unless polled")]] UnixListener::Incoming {
 public:
  using Item = UnixStream;

  /// What incoming() makes.
  explicit Incoming(UnixListener & listener) noexcept : listener_(&listener) {}
  Incoming(Incoming && other) noexcept : listener_(other.listener_), waiting_(std::exchange(other.waiting_, false)) {}
  Incoming& operator=(Incoming&&) = delete;
  ~Incoming() {
    if (waiting_) listener_->abandon(Interest::Read);
  }

  /// The next connection; as TcpListener's incoming(), it skips failed connections and pauses
  /// while out of descriptors.
  Poll<std::optional<UnixStream>> poll_next(Context & cx) {
    auto accepted = backoff_.poll_accept(cx, [this](Context& c) { return listener_->poll_accept(c); });
    waiting_ = accepted.is_pending();
    if (waiting_) return pending;
    return ready(std::move(accepted).value());
  }

 private:
  UnixListener* listener_;
  bool waiting_ = false;
  detail::AcceptBackoff backoff_;
};

inline UnixListener::Incoming UnixListener::incoming() noexcept { return Incoming(*this); }

/// A Unix datagram socket: bound to a path, unbound, or one of a pair.
class UnixDatagram {
 public:
  /// Binds at `path` now.
  static UnixDatagram bind(std::string_view path);
  /// A socket with no address (it can send, and receive on a connected pair).
  static UnixDatagram unbound();
  /// Two sockets connected to each other (socketpair).
  static std::pair<UnixDatagram, UnixDatagram> pair();

  UnixDatagram(UnixDatagram&&) noexcept = default;
  UnixDatagram& operator=(UnixDatagram&&) noexcept = default;

  /// Sets the default destination, for send and recv; now.
  void connect(std::string_view path);

  /// What send_to() and send() return: a future of the bytes sent (a datagram is whole).
  using SendTo = IoFuture<SendToOp<UnixDatagram, std::optional<std::string>>>;
  /// What recv_from() returns: a future of a datagram's length and its sender's path.
  using RecvFrom = IoFuture<RecvFromOp<UnixDatagram>>;
  /// What recv() returns: a future of a datagram's length.
  using Recv = IoFuture<RecvOp<UnixDatagram>>;

  /// A future of the bytes sent (a datagram is whole) to `path`.
  SendTo send_to(std::span<const std::byte> bytes, std::string_view path) {
    return SendTo(*this, bytes, std::optional<std::string>(path));
  }
  /// A future of the bytes sent to the connected peer.
  SendTo send(std::span<const std::byte> bytes) { return SendTo(*this, bytes, std::nullopt); }
  /// A future of a datagram's length and its sender's path ("" if unbound).
  RecvFrom recv_from(std::span<std::byte> buffer) noexcept { return RecvFrom(*this, buffer); }
  /// A future of a datagram's length.
  Recv recv(std::span<std::byte> buffer) noexcept { return Recv(*this, buffer); }

  /// The path it is bound to ("" if none).
  const std::string& path() const noexcept { return path_; }
  /// The socket's file descriptor; this object still owns it.
  int native_handle() const noexcept { return source_.fd(); }

  /// What send_to() polls (to `path`, or the connected peer when empty).
  Poll<std::size_t> poll_send_to(Context& cx, std::span<const std::byte> bytes, const std::optional<std::string>& path);
  /// What recv_from() polls.
  Poll<std::pair<std::size_t, std::string>> poll_recv_from(Context& cx, std::span<std::byte> buffer);
  /// What recv() polls: the datagram's length.
  Poll<std::size_t> poll_recv(Context& cx, std::span<std::byte> buffer) {
    auto got = poll_recv_from(cx, buffer);
    if (got.is_pending()) return pending;
    return ready(got.value().first);
  }
  /// A future that waited on `interest` going away lets go of its waker (rule 5).
  void abandon(Interest interest) noexcept { source_.abandon(interest); }

 private:
  UnixDatagram(detail::IoSource source, std::string path) noexcept
      : source_(std::move(source)), path_(std::move(path)) {}

  detail::IoSource source_;
  std::string path_;
};

}  // namespace pollux
