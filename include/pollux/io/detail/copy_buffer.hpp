// CopyBuffer: one direction of copy and copy_bidirectional: reads into a
// buffer of its own, writes it all out, again until the reader's end, then
// flushes the writer. It remembers which side it waits on, so that a
// destroyed copy takes back exactly the wakers it left (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "pollux/core/poll.hpp"
#include "pollux/io/async_io.hpp"
#include "pollux/io/io_error.hpp"

namespace pollux::detail {

class CopyBuffer {
 public:
  static constexpr std::size_t kSize = 8 * 1024;  // as tokio's

  CopyBuffer() : buffer_(std::make_unique_for_overwrite<std::byte[]>(kSize)) {}

  // Ready with the bytes copied, once the reader ended and the writer took
  // (and flushed) every byte.
  template <AsyncRead R, AsyncWrite W>
  Poll<std::uint64_t> poll_copy(Context& cx, R& reader, W& writer) {
    for (;;) {
      if (pos_ == filled_ && !read_done_) {
        auto n = reader.poll_read(cx, std::span<std::byte>(buffer_.get(), kSize));
        if (n.is_pending()) return wait(Side::Reader);
        pos_ = 0;
        filled_ = n.value();
        read_done_ = filled_ == 0;
      }
      while (pos_ < filled_) {
        auto n = writer.poll_write(cx, std::span<const std::byte>(buffer_.get() + pos_, filled_ - pos_));
        if (n.is_pending()) return wait(Side::Writer);
        if (n.value() == 0) throw_write_zero("pollux::copy", pos_, filled_);
        pos_ += n.value();
        copied_ += n.value();
      }
      if (read_done_) {
        if constexpr (AsyncFlush<W>) {
          if (writer.poll_flush(cx).is_pending()) return wait(Side::Writer);
        }
        waiting_ = Side::None;
        return ready(copied_);
      }
    }
  }

  // Takes back the waker this copy left with the side it waits on.
  template <AsyncRead R, AsyncWrite W>
  void abandon(R& reader, W& writer) noexcept {
    if (waiting_ == Side::Reader) reader.abandon(Interest::Read);
    if (waiting_ == Side::Writer) writer.abandon(Interest::Write);
    waiting_ = Side::None;
  }

 private:
  enum class Side { None, Reader, Writer };

  Pending wait(Side side) noexcept {
    waiting_ = side;
    return pending;
  }

  std::unique_ptr<std::byte[]> buffer_;
  std::size_t pos_ = 0;     // the next byte to write
  std::size_t filled_ = 0;  // the end of the bytes read
  bool read_done_ = false;
  std::uint64_t copied_ = 0;
  Side waiting_ = Side::None;
};

}  // namespace pollux::detail
