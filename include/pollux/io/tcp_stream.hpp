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
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/io/io_source.hpp"
#include "pollux/io/read.hpp"
#include "pollux/io/read_exact.hpp"
#include "pollux/io/socket_addr.hpp"
#include "pollux/io/write.hpp"
#include "pollux/io/write_all.hpp"

namespace pollux {

enum class Shutdown { Read, Write, Both };

class TcpStream {
 public:
  class Connect;

  // A future of a stream connected to `addr`. Throws (from its poll)
  // std::system_error, "connection refused" and the like, naming addr.
  static Connect connect(const SocketAddr& addr) noexcept;

  // Takes over a connected non-blocking socket (what accept does).
  TcpStream(detail::IoSource source, const SocketAddr& peer) noexcept : source_(std::move(source)), peer_(peer) {}
  TcpStream(TcpStream&&) noexcept = default;
  TcpStream& operator=(TcpStream&&) noexcept = default;

  auto read(std::span<std::byte> buffer) noexcept { return Read<TcpStream>(*this, buffer); }
  auto read(std::span<char> buffer) noexcept { return read(std::as_writable_bytes(buffer)); }
  auto write(std::span<const std::byte> bytes) noexcept { return Write<TcpStream>(*this, bytes); }
  auto write(std::span<const char> bytes) noexcept { return write(std::as_bytes(bytes)); }
  auto read_exact(std::span<std::byte> buffer) noexcept { return ReadExact<TcpStream>(*this, buffer); }
  auto read_exact(std::span<char> buffer) noexcept { return read_exact(std::as_writable_bytes(buffer)); }
  auto write_all(std::span<const std::byte> bytes) noexcept { return WriteAll<TcpStream>(*this, bytes); }
  auto write_all(std::span<const char> bytes) noexcept { return write_all(std::as_bytes(bytes)); }

  // Shuts down one or both directions now (the peer reads EOF after a
  // write shutdown). Throws std::system_error.
  void shutdown(Shutdown how = Shutdown::Write);
  void set_nodelay(bool on);
  bool nodelay() const;
  SocketAddr local_addr() const;
  SocketAddr peer_addr() const noexcept { return peer_; }
  int native_handle() const noexcept { return source_.fd(); }
  // Deregisters and closes the socket now (the destructor does otherwise).
  void close() noexcept { source_.close(); }

  // AsyncRead / AsyncWrite.
  Poll<std::size_t> poll_read(Context& cx, std::span<std::byte> buffer);
  Poll<std::size_t> poll_write(Context& cx, std::span<const std::byte> bytes);
  void abandon_read() noexcept { source_.abandon(detail::Direction::Read); }
  void abandon_write() noexcept { source_.abandon(detail::Direction::Write); }

 private:
  [[noreturn]] void fail(int error, const char* operation, const char* preposition) const;

  detail::IoSource source_;
  SocketAddr peer_;
};

class TcpStream::Connect {
 public:
  using Output = TcpStream;

  explicit Connect(const SocketAddr& addr) noexcept : addr_(addr) {}
  Connect(Connect&& other) noexcept
      : addr_(other.addr_), source_(std::move(other.source_)), state_(std::exchange(other.state_, State::Done)) {}
  Connect& operator=(Connect&&) = delete;

  Poll<TcpStream> poll(Context& cx);

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

}  // namespace pollux
