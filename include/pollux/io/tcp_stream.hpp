// TcpStream: a connected TCP socket. connect(addr) is a future of one;
// TcpListener::accept gives them too. read/write/read_exact/write_all are
// the generic futures of io/ over its AsyncRead/AsyncWrite side, so a
// hand-written future can also call poll_read/poll_write itself.
//
// The socket registers with the driver of the thread that first polls it
// (rule 8: NoRuntime if there is none); after that it may be moved, but
// not while a future borrows it. Errors are std::system_error whose
// message names the operation and the peer: "pollux::TcpStream::read from
// 127.0.0.1:8080: Connection reset by peer". Writes never raise SIGPIPE.
//
// On the io_uring backend the stream keeps a socket buffer of its own each
// way, so no future's memory is handed to the kernel and a future destroyed
// at any point loses nothing: received bytes wait here for the next read; a
// write is done once its bytes are copied into the send buffer (64 KiB at
// most), and a failed send's error comes with the next write or flush;
// flush waits until the kernel has every byte. Closing the stream hands
// what is still buffered to the kernel.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <span>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include <utility>

#include "pollux/core/box_future.hpp"
#include "pollux/core/context.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/result.hpp"
#include "pollux/io/io_error.hpp"
#include "pollux/io/detail/resolve.hpp"
#include "pollux/io/detail/io_source.hpp"
#include "pollux/io/detail/stream_socket.hpp"
#include "pollux/io/io_future.hpp"
#include "pollux/io/read.hpp"
#include "pollux/io/read_exact.hpp"
#include "pollux/io/socket_operations.hpp"
#include "pollux/io/socket_addr.hpp"
#include "pollux/io/write.hpp"
#include "pollux/io/write_all.hpp"

namespace pollux {

/// Which direction shutdown() closes.
enum class Shutdown { Read, Write, Both };

class TcpReadHalf;
class TcpWriteHalf;
class OwnedTcpReadHalf;
class OwnedTcpWriteHalf;

/// A connected TCP socket.
class TcpStream {
 public:
  class Connect;
  class ConnectHost;
  /// What peek() returns: a future of the bytes copied.
  using Peek = IoFuture<PeekOp<TcpStream>>;
  /// What readable() and writable() return: a future that is Ready once the socket is.
  using Ready = IoFuture<ReadyOp<TcpStream>>;
  /// What write_vectored() returns: a future of the bytes written.
  using WriteVectored = IoFuture<WriteVectoredOp<TcpStream>>;

  /// A future of a stream connected to `addr`. Throws (from its poll)
  /// std::system_error, "connection refused" and the like, naming addr.
  static Connect connect(const SocketAddr& addr) noexcept;
  /// The same for an address written as text: "127.0.0.1:8080",
  /// "[::1]:8080", or a host name, "localhost:8080", which is resolved on
  /// the runtime's blocking pool first; each address it has is tried in
  /// turn until one connects. Text that is not host:port is a
  /// std::invalid_argument at once.
  static ConnectHost connect(std::string_view addr);

  /// Takes over a connected non-blocking socket (what accept does).
  TcpStream(detail::IoSource source, const SocketAddr& peer) noexcept : socket_(std::move(source)), peer_(peer) {}
  TcpStream(TcpStream&&) noexcept = default;
  TcpStream& operator=(TcpStream&&) noexcept = default;

  /// A future of one read into `buffer`: the number of bytes read, 0 at the end of the stream.
  auto read(std::span<std::byte> buffer) noexcept { return Read<TcpStream>(*this, buffer); }
  /// read() into a buffer of chars.
  auto read(std::span<char> buffer) noexcept { return read(std::as_writable_bytes(buffer)); }
  /// A future of one write of `bytes`: the number of bytes written.
  auto write(std::span<const std::byte> bytes) noexcept { return Write<TcpStream>(*this, bytes); }
  /// write() of chars.
  auto write(std::span<const char> bytes) noexcept { return write(std::as_bytes(bytes)); }
  /// A future that fills `buffer` whole; the end of the stream before that throws std::system_error
  /// (io_errc::unexpected_eof).
  auto read_exact(std::span<std::byte> buffer) noexcept { return ReadExact<TcpStream>(*this, buffer); }
  /// read_exact() into a buffer of chars.
  auto read_exact(std::span<char> buffer) noexcept { return read_exact(std::as_writable_bytes(buffer)); }
  /// A future that writes all of `bytes`.
  auto write_all(std::span<const std::byte> bytes) noexcept { return WriteAll<TcpStream>(*this, bytes); }
  /// write_all() of chars.
  auto write_all(std::span<const char> bytes) noexcept { return write_all(std::as_bytes(bytes)); }

  /// Shuts down one or both directions now (the peer reads EOF after a
  /// write shutdown). Throws std::system_error.
  void shutdown(Shutdown how = Shutdown::Write);
  /// Sets TCP_NODELAY (no Nagle delay for small writes). Throws std::system_error.
  void set_nodelay(bool on);
  /// Whether TCP_NODELAY is set.
  bool nodelay() const;
  /// The local end's address.
  SocketAddr local_addr() const;
  /// The address of the peer.
  SocketAddr peer_addr() const noexcept { return peer_; }
  /// The socket's file descriptor; this object still owns it.
  int native_handle() const noexcept;
  /// Deregisters and closes the socket now (the destructor does otherwise).
  void close() noexcept { socket_.close(); }

  /// A future of bytes copied from the receive queue without taking them
  /// off it: the next read gets them again.
  Peek peek(std::span<std::byte> buffer) noexcept;
  /// One write of several buffers (writev): Ready with how many bytes of
  /// them, in order, the socket took (at least one for a non-empty set).
  Poll<std::size_t> poll_write_vectored(Context& cx, std::span<const std::span<const std::byte>> buffers);
  /// A future of poll_write_vectored; `buffers` must outlive it. Cancel-safe
  /// as write is.
  WriteVectored write_vectored(std::span<const std::span<const std::byte>> buffers) noexcept {
    return WriteVectored(*this, buffers);
  }

  /// A future that is Ready once the socket has bytes to read (or its end,
  /// or an error), without reading them: wait with it, then try_read, so an
  /// idle connection holds no read buffer. Readiness can be stale: a
  /// try_read after it may still find nothing (WouldBlock); wait again.
  Ready readable() noexcept { return Ready(*this, Interest::Read); }
  /// A future that is Ready once the socket has room to write; try_write next.
  Ready writable() noexcept { return Ready(*this, Interest::Write); }
  /// Ready once the socket is readable, else Pending with the waker of `cx` kept.
  Poll<void> poll_read_ready(Context& cx);
  /// Ready once the socket is writable, else Pending with the waker of `cx` kept.
  Poll<void> poll_write_ready(Context& cx);
  /// Reads what is there now, without waiting: the count (0 at the end of
  /// the stream), or WouldBlock when nothing is (then wait on readable()).
  /// Throws std::system_error for the errors read() throws.
  Result<std::size_t, WouldBlock> try_read(std::span<std::byte> buffer);
  /// try_read() into a buffer of chars.
  Result<std::size_t, WouldBlock> try_read(std::span<char> buffer) { return try_read(std::as_writable_bytes(buffer)); }
  /// Writes what fits now, without waiting: the count, or WouldBlock when
  /// the send buffer is full (then wait on writable()). Throws as write() does.
  Result<std::size_t, WouldBlock> try_write(std::span<const std::byte> bytes);
  /// try_write() of chars.
  Result<std::size_t, WouldBlock> try_write(std::string_view text) {
    return try_write(std::as_bytes(std::span(text.data(), text.size())));
  }

  /// Borrowed halves, to read in one future and write in another at once
  /// (both in one task, or any two that the stream outlives).
  std::pair<TcpReadHalf, TcpWriteHalf> split() noexcept;
  /// Owned halves, for two tasks: the stream is shared by both, the write
  /// half shuts the writing direction down when it goes, and the socket
  /// closes when both went. One allocation.
  std::pair<OwnedTcpReadHalf, OwnedTcpWriteHalf> into_split() &&;

  /// AsyncRead / AsyncWrite / AsyncFlush / AsyncShutdown.
  Poll<std::size_t> poll_read(Context& cx, std::span<std::byte> buffer);
  /// AsyncWrite: writes what fits of `bytes`. Ready with the count written, or Pending with the
  /// waker of `cx` kept until there is room.
  Poll<std::size_t> poll_write(Context& cx, std::span<const std::byte> bytes);
  /// AsyncRead / AsyncWrite: a future that waited on `interest` and is
  /// destroyed before it finished lets go of its waker here (rule 5).
  void abandon(Interest interest) noexcept;
  /// AsyncFlush: Ready once the kernel has every byte written: at once on
  /// epoll; on io_uring once the send buffer is empty. Throws the error
  /// of a send that failed.
  Poll<void> poll_flush(Context& cx);
  /// AsyncShutdown: flushes, then shuts the writing direction down (the
  /// peer reads the end).
  Poll<void> poll_shutdown(Context& cx);
  /// What peek() polls: copies what is there without taking it.
  Poll<std::size_t> poll_peek(Context& cx, std::span<std::byte> buffer);

 private:
  [[noreturn]] void fail(int error, const char* operation, const char* preposition) const;
  // A result as the caller sees it: the count, Pending (or WouldBlock), or
  // the error thrown, naming `operation` and the peer.
  Poll<std::size_t> count(Poll<detail::SysResult> result, const char* operation, const char* preposition) const;
  Result<std::size_t, WouldBlock> count_now(detail::SysResult result, const char* operation,
                                            const char* preposition) const;

  detail::StreamSocket socket_;
  SocketAddr peer_;
};

/// What connect(addr) returns: a future of the connected stream.
class [[nodiscard("futures do nothing unless polled")]] TcpStream::Connect {
 public:
  using Output = TcpStream;

  /// What connect(addr) makes.
  explicit Connect(const SocketAddr& addr) noexcept : addr_(addr) {}
  Connect(Connect && other) noexcept
      : addr_(other.addr_), source_(std::move(other.source_)), state_(std::exchange(other.state_, State::Done)) {}
  Connect& operator=(Connect&&) = delete;

  /// Ready with the connected stream, or throws the connection's error.
  Poll<TcpStream> poll(Context & cx);

 private:
  enum class State {
    Start,       // no socket yet
    Connecting,  // connect() is in progress: wait until the socket is writable
    Done,
  };

  [[noreturn]] void fail(int error);

  SocketAddr addr_;
  detail::IoSource source_;
  State state_ = State::Start;
};

inline TcpStream::Connect TcpStream::connect(const SocketAddr& addr) noexcept { return Connect(addr); }
/// The future TcpStream::connect(text) returns: resolve (for a name), then
/// connect to each address in turn; the last failure is thrown if none
/// connects. Cancellation: destroying it cancels the lookup's wait (the
/// lookup itself finishes on its thread) or the connection in progress.
class [[nodiscard("futures do nothing unless polled")]] TcpStream::ConnectHost {
 public:
  using Output = TcpStream;

  /// What connect("host:port") makes: resolves, then connects.
  explicit ConnectHost(std::string_view text);
  ConnectHost(ConnectHost &&) noexcept = default;
  ConnectHost& operator=(ConnectHost&&) = delete;

  /// Resolves the name, then tries each address in turn; Ready with the first connection.
  Poll<TcpStream> poll(Context & cx);

 private:
  enum class State { Start, Resolving, Connecting, Done };

  std::string host_;
  std::uint16_t port_ = 0;
  std::optional<BoxFuture<std::vector<SocketAddr>>> resolving_;
  std::vector<SocketAddr> addrs_;  // a numeric address: its only one
  std::size_t next_ = 0;           // the next address to try
  std::optional<Connect> connecting_;
  std::exception_ptr last_error_;
  State state_ = State::Start;
};

inline TcpStream::ConnectHost TcpStream::connect(std::string_view addr) { return ConnectHost(addr); }

inline TcpStream::Peek TcpStream::peek(std::span<std::byte> buffer) noexcept { return Peek(*this, buffer); }

}  // namespace pollux

// The halves split() and into_split() return.
#include "pollux/io/tcp_split.hpp"  // NOLINT: after TcpStream, which they use
