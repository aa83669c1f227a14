// The halves of a TcpStream, to read and write at once from two futures
// (split: borrowed) or two tasks (into_split: owned, tokio's
// OwnedReadHalf/OwnedWriteHalf). Reading and writing are independent
// directions of the socket, each with its own waker in the reactor, so
// the halves may be polled at the same time from two threads (rule 6).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <memory>
#include <span>
#include <utility>

#include "pollux/io/read.hpp"
#include "pollux/io/read_exact.hpp"
#include "pollux/io/tcp_stream.hpp"
#include "pollux/io/write.hpp"
#include "pollux/io/write_all.hpp"

namespace pollux {

/// The reading half of a TcpStream; the stream must outlive it.
class TcpReadHalf {
 public:
  /// What split() makes.
  explicit TcpReadHalf(TcpStream& stream) noexcept : stream_(&stream) {}

  /// AsyncRead: reads what is there into `buffer`. Ready with the count (0 at the end of the
  /// stream), or Pending with the waker of `cx` kept until there is more to read.
  Poll<std::size_t> poll_read(Context& cx, std::span<std::byte> buffer) { return stream_->poll_read(cx, buffer); }
  /// AsyncRead: a read future destroyed before it finished lets go of its waker here (rule 5).
  void abandon(Interest interest) noexcept { stream_->abandon(interest); }

  /// A future of one read into `buffer`: the number of bytes read, 0 at the end of the stream.
  auto read(std::span<std::byte> buffer) noexcept { return Read<TcpReadHalf>(*this, buffer); }
  /// read() into a buffer of chars.
  auto read(std::span<char> buffer) noexcept { return read(std::as_writable_bytes(buffer)); }
  /// A future that fills `buffer` whole; the end of the stream before that throws std::system_error
  /// (io_errc::unexpected_eof).
  auto read_exact(std::span<std::byte> buffer) noexcept { return ReadExact<TcpReadHalf>(*this, buffer); }
  /// read_exact() into a buffer of chars.
  auto read_exact(std::span<char> buffer) noexcept { return read_exact(std::as_writable_bytes(buffer)); }
  /// The address of the peer.
  SocketAddr peer_addr() const noexcept { return stream_->peer_addr(); }

 private:
  TcpStream* stream_;
};

/// The writing half of a TcpStream; the stream must outlive it.
class TcpWriteHalf {
 public:
  /// What split() makes.
  explicit TcpWriteHalf(TcpStream& stream) noexcept : stream_(&stream) {}

  /// AsyncWrite: writes what fits of `bytes`. Ready with the count written, or Pending with the
  /// waker of `cx` kept until there is room.
  Poll<std::size_t> poll_write(Context& cx, std::span<const std::byte> bytes) { return stream_->poll_write(cx, bytes); }
  /// AsyncWrite: a write future destroyed before it finished lets go of its waker here (rule 5).
  void abandon(Interest interest) noexcept { stream_->abandon(interest); }
  /// AsyncFlush: Ready once the kernel has every byte written (see TcpStream::poll_flush).
  Poll<void> poll_flush(Context& cx) { return stream_->poll_flush(cx); }
  /// AsyncWrite: shuts the writing direction down; the peer reads the end of the stream.
  Poll<void> poll_shutdown(Context& cx) { return stream_->poll_shutdown(cx); }

  /// A future of one write of `bytes`: the number of bytes written.
  auto write(std::span<const std::byte> bytes) noexcept { return Write<TcpWriteHalf>(*this, bytes); }
  /// A future that writes all of `bytes`.
  auto write_all(std::span<const std::byte> bytes) noexcept { return WriteAll<TcpWriteHalf>(*this, bytes); }
  /// write_all() of chars.
  auto write_all(std::span<const char> bytes) noexcept { return write_all(std::as_bytes(bytes)); }
  /// The address of the peer.
  SocketAddr peer_addr() const noexcept { return stream_->peer_addr(); }

 private:
  TcpStream* stream_;
};

/// The reading half of an into_split TcpStream; shares the stream.
class OwnedTcpReadHalf {
 public:
  /// What into_split() makes.
  explicit OwnedTcpReadHalf(std::shared_ptr<TcpStream> stream) noexcept : stream_(std::move(stream)) {}
  OwnedTcpReadHalf(OwnedTcpReadHalf&&) noexcept = default;
  /// Releases the half this held, then takes over `other`'s.
  OwnedTcpReadHalf& operator=(OwnedTcpReadHalf&&) noexcept = default;
  // Not copyable: two readers of one socket would each take bytes the
  // other expects, with no error to say so.
  OwnedTcpReadHalf(const OwnedTcpReadHalf&) = delete;
  OwnedTcpReadHalf& operator=(const OwnedTcpReadHalf&) = delete;

  /// AsyncRead: reads what is there into `buffer`. Ready with the count (0 at the end of the
  /// stream), or Pending with the waker of `cx` kept until there is more to read.
  Poll<std::size_t> poll_read(Context& cx, std::span<std::byte> buffer) { return stream_->poll_read(cx, buffer); }
  /// AsyncRead: a read future destroyed before it finished lets go of its waker here (rule 5).
  void abandon(Interest interest) noexcept { stream_->abandon(interest); }

  /// A future of one read into `buffer`: the number of bytes read, 0 at the end of the stream.
  auto read(std::span<std::byte> buffer) noexcept { return Read<OwnedTcpReadHalf>(*this, buffer); }
  /// read() into a buffer of chars.
  auto read(std::span<char> buffer) noexcept { return read(std::as_writable_bytes(buffer)); }
  /// A future that fills `buffer` whole; the end of the stream before that throws std::system_error
  /// (io_errc::unexpected_eof).
  auto read_exact(std::span<std::byte> buffer) noexcept { return ReadExact<OwnedTcpReadHalf>(*this, buffer); }
  /// read_exact() into a buffer of chars.
  auto read_exact(std::span<char> buffer) noexcept { return read_exact(std::as_writable_bytes(buffer)); }
  /// The address of the peer.
  SocketAddr peer_addr() const noexcept { return stream_->peer_addr(); }

 private:
  friend class OwnedTcpWriteHalf;
  std::shared_ptr<TcpStream> stream_;
};

/// The writing half of an into_split TcpStream; shares the stream, and
/// shuts its writing direction down when destroyed (the peer reads the
/// end), unless reunite() took it back.
class OwnedTcpWriteHalf {
 public:
  /// What into_split() makes.
  explicit OwnedTcpWriteHalf(std::shared_ptr<TcpStream> stream) noexcept : stream_(std::move(stream)) {}
  OwnedTcpWriteHalf(OwnedTcpWriteHalf&&) noexcept = default;
  OwnedTcpWriteHalf& operator=(OwnedTcpWriteHalf&&) = delete;
  OwnedTcpWriteHalf(const OwnedTcpWriteHalf&) = delete;
  OwnedTcpWriteHalf& operator=(const OwnedTcpWriteHalf&) = delete;
  ~OwnedTcpWriteHalf() {
    if (stream_ && shutdown_on_drop_) {
      try {
        stream_->shutdown(Shutdown::Write);
      } catch (const std::system_error&) {
        // The connection is gone already: nothing left to tell the peer.
      }
    }
  }

  /// AsyncWrite: writes what fits of `bytes`. Ready with the count written, or Pending with the
  /// waker of `cx` kept until there is room.
  Poll<std::size_t> poll_write(Context& cx, std::span<const std::byte> bytes) { return stream_->poll_write(cx, bytes); }
  /// AsyncWrite: a write future destroyed before it finished lets go of its waker here (rule 5).
  void abandon(Interest interest) noexcept { stream_->abandon(interest); }
  /// AsyncFlush: Ready once the kernel has every byte written (see TcpStream::poll_flush).
  Poll<void> poll_flush(Context& cx) { return stream_->poll_flush(cx); }
  /// AsyncWrite: shuts the writing direction down; the peer reads the end of the stream.
  Poll<void> poll_shutdown(Context& cx) { return stream_->poll_shutdown(cx); }

  /// A future of one write of `bytes`: the number of bytes written.
  auto write(std::span<const std::byte> bytes) noexcept { return Write<OwnedTcpWriteHalf>(*this, bytes); }
  /// A future that writes all of `bytes`.
  auto write_all(std::span<const std::byte> bytes) noexcept { return WriteAll<OwnedTcpWriteHalf>(*this, bytes); }
  /// write_all() of chars.
  auto write_all(std::span<const char> bytes) noexcept { return write_all(std::as_bytes(bytes)); }
  /// The address of the peer.
  SocketAddr peer_addr() const noexcept { return stream_->peer_addr(); }

  /// The stream again, from the two halves it was split into; nullopt
  /// (and both halves unchanged) if `read` is the half of another stream.
  std::optional<TcpStream> reunite(OwnedTcpReadHalf& read) {
    if (read.stream_ != stream_) return std::nullopt;
    shutdown_on_drop_ = false;
    read.stream_.reset();
    auto stream = std::move(stream_);
    return std::optional<TcpStream>(std::move(*stream));
  }

 private:
  std::shared_ptr<TcpStream> stream_;
  bool shutdown_on_drop_ = true;
};

inline std::pair<TcpReadHalf, TcpWriteHalf> TcpStream::split() noexcept {
  return {TcpReadHalf(*this), TcpWriteHalf(*this)};
}

inline std::pair<OwnedTcpReadHalf, OwnedTcpWriteHalf> TcpStream::into_split() && {
  auto shared = std::make_shared<TcpStream>(std::move(*this));
  return {OwnedTcpReadHalf(shared), OwnedTcpWriteHalf(shared)};
}

}  // namespace pollux
