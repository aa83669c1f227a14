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

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <optional>
#include <system_error>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/io/detail/io_operation.hpp"
#include "pollux/io/detail/accept_backoff.hpp"
#include "pollux/io/detail/io_source.hpp"
#include "pollux/io/read.hpp"
#include "pollux/io/read_exact.hpp"
#include "pollux/io/tcp_stream.hpp"
#include "pollux/io/write.hpp"
#include "pollux/io/write_all.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {

/// A connected Unix stream socket: AsyncRead, AsyncWrite, AsyncShutdown.
class UnixStream {
 public:
  /// A future of a stream connected to the socket at `path`.
  static auto connect(std::string_view path) {
    return detail::io_operation<UnixStream>([path = std::string(path), source = std::optional<detail::IoSource>()](
                                                Context& cx) mutable { return poll_connect(cx, path, source); },
                                            [] {});
  }
  /// Two streams connected to each other (socketpair).
  static std::pair<UnixStream, UnixStream> pair();

  /// Takes over a connected socket (what accept and connect do).
  UnixStream(detail::IoSource source, std::string peer) noexcept : source_(std::move(source)), peer_(std::move(peer)) {}
  UnixStream(UnixStream&&) noexcept = default;
  UnixStream& operator=(UnixStream&&) noexcept = default;

  /// A future of one read into `buffer`: the number of bytes read, 0 at the end of the stream.
  auto read(std::span<std::byte> buffer) noexcept { return Read<UnixStream>(*this, buffer); }
  /// read() into a buffer of chars.
  auto read(std::span<char> buffer) noexcept { return read(std::as_writable_bytes(buffer)); }
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
  int native_handle() const noexcept { return source_.fd(); }

  /// AsyncRead: reads what is there into `buffer`. Ready with the count (0 at the end of the
  /// stream), or Pending with the waker of `cx` kept until there is more to read.
  Poll<std::size_t> poll_read(Context& cx, std::span<std::byte> buffer);
  /// AsyncWrite: writes what fits of `bytes`. Ready with the count written, or Pending with the
  /// waker of `cx` kept until there is room.
  Poll<std::size_t> poll_write(Context& cx, std::span<const std::byte> bytes);
  /// AsyncRead: a read future destroyed before it finished lets go of its waker here (rule 5).
  void abandon_read() noexcept { source_.abandon(detail::Direction::Read); }
  /// AsyncWrite: a write future destroyed before it finished lets go of its waker here (rule 5).
  void abandon_write() noexcept { source_.abandon(detail::Direction::Write); }
  /// AsyncWrite: Ready at once: a socket keeps no buffer of its own.
  Poll<void> poll_flush(Context&) noexcept { return ready(); }
  /// AsyncWrite: shuts the writing direction down; the peer reads the end of the stream.
  Poll<void> poll_shutdown(Context&) {
    shutdown(Shutdown::Write);
    return ready();
  }

 private:
  static Poll<UnixStream> poll_connect(Context& cx, const std::string& path, std::optional<detail::IoSource>& source);

  detail::IoSource source_;
  std::string peer_;
};

/// A listening Unix stream socket.
class UnixListener {
 public:
  class Incoming;

  /// Binds and listens at `path` now (std::system_error naming it).
  static UnixListener bind(std::string_view path, int backlog = 1024);

  UnixListener(UnixListener&&) noexcept = default;
  UnixListener& operator=(UnixListener&&) noexcept = default;

  /// A future of the next connection.
  auto accept() noexcept {
    return detail::io_operation<UnixStream>([this](Context& cx) { return poll_accept(cx); },
                                            [this] { abandon_accept(); });
  }
  /// The connections as a Stream that never ends; it borrows the listener.
  Incoming incoming() noexcept;

  /// The path it listens at.
  const std::string& path() const noexcept { return path_; }
  /// The socket's file descriptor; this object still owns it.
  int native_handle() const noexcept { return source_.fd(); }

  /// What accept() polls.
  Poll<UnixStream> poll_accept(Context& cx);
  /// An accept() going away lets go of its waker (rule 5).
  void abandon_accept() noexcept { source_.abandon(detail::Direction::Read); }

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
    if (waiting_) listener_->abandon_accept();
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

  /// A future of the bytes sent (a datagram is whole) to `path`.
  auto send_to(std::span<const std::byte> bytes, std::string_view path) {
    return detail::io_operation<std::size_t>(
        [this, bytes, path = std::string(path)](Context& cx) { return poll_send_to(cx, bytes, &path); },
        [this] { source_.abandon(detail::Direction::Write); });
  }
  /// A future of the bytes sent to the connected peer.
  auto send(std::span<const std::byte> bytes) {
    return detail::io_operation<std::size_t>([this, bytes](Context& cx) { return poll_send_to(cx, bytes, nullptr); },
                                             [this] { source_.abandon(detail::Direction::Write); });
  }
  /// A future of a datagram's length and its sender's path ("" if unbound).
  auto recv_from(std::span<std::byte> buffer) {
    return detail::io_operation<std::pair<std::size_t, std::string>>(
        [this, buffer](Context& cx) { return poll_recv_from(cx, buffer); },
        [this] { source_.abandon(detail::Direction::Read); });
  }
  /// A future of a datagram's length.
  auto recv(std::span<std::byte> buffer) {
    return detail::io_operation<std::size_t>(
        [this, buffer](Context& cx) -> Poll<std::size_t> {
          auto got = poll_recv_from(cx, buffer);
          if (got.is_pending()) return pending;
          return ready(got.value().first);
        },
        [this] { source_.abandon(detail::Direction::Read); });
  }

  /// The path it is bound to ("" if none).
  const std::string& path() const noexcept { return path_; }
  /// The socket's file descriptor; this object still owns it.
  int native_handle() const noexcept { return source_.fd(); }

  /// What send_to() polls (to `path`, or the connected peer when null).
  Poll<std::size_t> poll_send_to(Context& cx, std::span<const std::byte> bytes, const std::string* path);
  /// What recv_from() polls.
  Poll<std::pair<std::size_t, std::string>> poll_recv_from(Context& cx, std::span<std::byte> buffer);

 private:
  UnixDatagram(detail::IoSource source, std::string path) noexcept
      : source_(std::move(source)), path_(std::move(path)) {}

  detail::IoSource source_;
  std::string path_;
};

}  // namespace pollux
