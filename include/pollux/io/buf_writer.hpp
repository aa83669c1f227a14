// BufWriter<W>: a writer that gathers small writes in a buffer and writes
// them to W in one go when the buffer is full, on flush() and on
// shutdown() (tokio's BufWriter). A write at least as large as the buffer
// goes straight to W (after what is buffered). Bytes still buffered when
// the BufWriter is destroyed are lost: flush (or shut down) first. If W
// can also read, so can the BufWriter: reads pass straight through. The
// buffer is allocated once, with the writer.
// Cancellation: a write's bytes are in the buffer once it was Ready; a
// flush destroyed half way leaves the rest buffered for the next one.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>

#include "pollux/io/async_io.hpp"
#include "pollux/io/detail/io_buffer.hpp"
#include "pollux/io/io_error.hpp"
#include "pollux/io/write.hpp"
#include "pollux/io/write_all.hpp"

namespace pollux {

/// A writer that gathers small writes in a buffer and writes them to W in one go when the buffer is
/// full, on flush() and on shutdown() (tokio's BufWriter).
template <AsyncWrite W>
class BufWriter {
 public:
  /// The default buffer size, as tokio's.
  static constexpr std::size_t kDefaultCapacity = 8 * 1024;

  /// Buffers writes to `inner`; a capacity of zero is a std::invalid_argument.
  explicit BufWriter(W inner, std::size_t capacity = kDefaultCapacity)
      : inner_(std::move(inner)),
        buffer_(detail::allocate_io_buffer(capacity, "pollux::BufWriter")),
        capacity_(capacity) {}

  /// AsyncWrite: writes what fits of `bytes`. Ready with the count written, or Pending with the
  /// waker of `cx` kept until there is room.
  Poll<std::size_t> poll_write(Context& cx, std::span<const std::byte> bytes) {
    if (filled_ + bytes.size() > capacity_) {
      if (poll_write_out(cx).is_pending()) return pending;
    }
    if (bytes.size() >= capacity_) return inner_.poll_write(cx, bytes);
    std::memcpy(buffer_.get() + filled_, bytes.data(), bytes.size());
    filled_ += bytes.size();
    return ready(bytes.size());
  }
  /// AsyncWrite / AsyncRead: a future that waited on `interest` and is
  /// destroyed before it finished lets go of its waker in W (rule 5).
  void abandon(Interest interest) noexcept { inner_.abandon(interest); }

  /// Ready once every buffered byte went to W (and W flushed, if it can).
  Poll<void> poll_flush(Context& cx) {
    if (poll_write_out(cx).is_pending()) return pending;
    if constexpr (AsyncFlush<W>)
      return inner_.poll_flush(cx);
    else
      return ready();
  }

  /// Flushes, then shuts W's writing down if it can (a TCP FIN).
  Poll<void> poll_shutdown(Context& cx) {
    if (poll_write_out(cx).is_pending()) return pending;
    if constexpr (AsyncShutdown<W>)
      return inner_.poll_shutdown(cx);
    else if constexpr (AsyncFlush<W>)
      return inner_.poll_flush(cx);
    else
      return ready();
  }

  /// AsyncRead, when the inner stream reads too: reads from it.
  Poll<std::size_t> poll_read(Context& cx, std::span<std::byte> out) requires AsyncRead<W> {
    return inner_.poll_read(cx, out);
  }

  /// The bytes written and not yet passed on to W.
  std::span<const std::byte> buffer() const noexcept { return {buffer_.get() + written_, filled_ - written_}; }
  /// The buffer's size.
  std::size_t capacity() const noexcept { return capacity_; }
  /// The inner stream.
  W& get_ref() noexcept { return inner_; }
  /// The inner stream.
  const W& get_ref() const noexcept { return inner_; }

  /// A future of one write of `bytes`: the number of bytes written.
  auto write(std::span<const std::byte> bytes) noexcept { return Write<BufWriter>(*this, bytes); }
  /// A future that writes all of `bytes`.
  auto write_all(std::span<const std::byte> bytes) noexcept { return WriteAll<BufWriter>(*this, bytes); }
  /// write_all() of chars.
  auto write_all(std::span<const char> bytes) noexcept { return write_all(std::as_bytes(bytes)); }

 private:
  // Writes the buffer out to W; Ready when it is empty.
  Poll<void> poll_write_out(Context& cx) {
    while (written_ < filled_) {
      auto n = inner_.poll_write(cx, std::span<const std::byte>(buffer_.get() + written_, filled_ - written_));
      if (n.is_pending()) return pending;
      if (n.value() == 0) detail::throw_write_zero("pollux::BufWriter", written_, filled_);
      written_ += n.value();
    }
    written_ = filled_ = 0;
    return ready();
  }

  W inner_;
  std::unique_ptr<std::byte[]> buffer_;
  std::size_t capacity_;
  std::size_t written_ = 0;  // bytes of the buffer already passed on
  std::size_t filled_ = 0;   // the end of the buffered bytes
};

}  // namespace pollux
