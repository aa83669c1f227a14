// BufReader<R>: a reader with a buffer of its own, so that reading a line
// or a few bytes at a time costs one system call per buffer, not per byte
// (tokio's BufReader). It is an AsyncBufRead (poll_fill_buf / consume) for
// read_until, read_line and lines, and an AsyncRead whose reads come from
// the buffer (a read at least as large as the buffer, with the buffer
// empty, goes straight to R). If R can also write, so can the BufReader:
// writes pass straight through. The buffer is allocated once, with the
// reader.
// Cancellation: bytes in the buffer stay there when a future reading from
// it is destroyed; only R's waker is taken back (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>

#include "pollux/io/async_io.hpp"
#include "pollux/io/detail/io_buffer.hpp"
#include "pollux/io/read.hpp"
#include "pollux/io/write.hpp"
#include "pollux/io/write_all.hpp"

namespace pollux {

/// A reader with a buffer of its own, so that reading a line or a few bytes at a time costs one
/// system call per buffer, not per byte (tokio's BufReader).
template <AsyncRead R>
class BufReader {
 public:
  /// The default buffer size, as tokio's.
  static constexpr std::size_t kDefaultCapacity = 8 * 1024;

  /// Buffers `inner`; a capacity of zero is a std::invalid_argument.
  explicit BufReader(R inner, std::size_t capacity = kDefaultCapacity)
      : inner_(std::move(inner)),
        buffer_(detail::allocate_io_buffer(capacity, "pollux::BufReader")),
        capacity_(capacity) {}

  /// AsyncBufRead: the buffered bytes, reading more first when none are left;
  /// empty at the end of the stream.
  Poll<std::span<const std::byte>> poll_fill_buf(Context& cx) {
    if (pos_ == filled_) {
      auto n = inner_.poll_read(cx, std::span<std::byte>(buffer_.get(), capacity_));
      if (n.is_pending()) return pending;
      pos_ = 0;
      filled_ = n.value();
    }
    return ready(std::span<const std::byte>(buffer_.get() + pos_, filled_ - pos_));
  }

  /// AsyncBufRead: marks the first `n` buffered bytes as used.
  void consume(std::size_t n) noexcept { pos_ = std::min(pos_ + n, filled_); }

  /// AsyncRead: from the buffer, or straight from the stream for a read as
  /// large as the buffer when it is empty.
  Poll<std::size_t> poll_read(Context& cx, std::span<std::byte> out) {
    if (pos_ == filled_ && out.size() >= capacity_) return inner_.poll_read(cx, out);
    auto buffered = poll_fill_buf(cx);
    if (buffered.is_pending()) return pending;
    std::size_t n = std::min(out.size(), buffered.value().size());
    if (n != 0) std::memcpy(out.data(), buffered.value().data(), n);
    consume(n);
    return ready(n);
  }
  /// AsyncRead / AsyncWrite: a future that waited on `interest` and is
  /// destroyed before it finished lets go of its waker in R (rule 5).
  void abandon(Interest interest) noexcept { inner_.abandon(interest); }

  /// AsyncWrite: writes what fits of `bytes`. Ready with the count written, or Pending with the
  /// waker of `cx` kept until there is room.
  Poll<std::size_t> poll_write(Context& cx, std::span<const std::byte> bytes) requires AsyncWrite<R> {
    return inner_.poll_write(cx, bytes);
  }
  /// AsyncWrite, when the inner stream writes too: flushes it.
  Poll<void> poll_flush(Context& cx) requires AsyncFlush<R> { return inner_.poll_flush(cx); }
  /// AsyncWrite: shuts the writing direction down; the peer reads the end of the stream.
  Poll<void> poll_shutdown(Context& cx) requires AsyncShutdown<R> { return inner_.poll_shutdown(cx); }

  /// The bytes read from R and not yet consumed.
  std::span<const std::byte> buffer() const noexcept { return {buffer_.get() + pos_, filled_ - pos_}; }
  /// The buffer's size.
  std::size_t capacity() const noexcept { return capacity_; }
  /// The inner stream.
  R& get_ref() noexcept { return inner_; }
  /// The inner stream.
  const R& get_ref() const noexcept { return inner_; }

  /// A future of one read into `buffer`: the number of bytes read, 0 at the end of the stream.
  auto read(std::span<std::byte> buffer) noexcept { return Read<BufReader>(*this, buffer); }
  /// read() into a buffer of chars.
  auto read(std::span<char> buffer) noexcept { return read(std::as_writable_bytes(buffer)); }

 private:
  R inner_;
  std::unique_ptr<std::byte[]> buffer_;
  std::size_t capacity_;
  std::size_t pos_ = 0;     // the next byte to hand out
  std::size_t filled_ = 0;  // the end of the bytes read
};

}  // namespace pollux
