// read_buf(reader, buffer): a future of one read into a BytesBuf's spare
// room, growing it first when it has none, so a caller never sizes a
// buffer by hand. Cancel-safe as read() is: destroyed before it is Ready,
// it has read nothing and takes its waker back from the reader (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/io/async_io.hpp"
#include "pollux/io/bytes_buf.hpp"

namespace pollux {

/// What read_buf() returns: Ready with the number of bytes appended to the
/// buffer, 0 at the end of the stream. Errors are thrown, as poll_read's.
template <AsyncRead R>
class [[nodiscard("futures do nothing unless polled")]] ReadBuf {
 public:
  /// The count appended; 0 at the end of the stream.
  using Output = std::size_t;
  /// The room a read reserves when the buffer has none.
  static constexpr std::size_t kChunk = 4096;

  /// What read_buf() makes; call that instead.
  ReadBuf(R & reader, BytesBuf & buffer) noexcept : reader_(&reader), buffer_(&buffer) {}
  ReadBuf(ReadBuf && other) noexcept
      : reader_(other.reader_), buffer_(other.buffer_), state_(std::exchange(other.state_, State::Done)) {}
  ReadBuf& operator=(ReadBuf&&) = delete;
  ~ReadBuf() {
    if (state_ == State::Waiting) reader_->abandon(Interest::Read);
  }

  /// Reads once into the buffer's spare room.
  Poll<std::size_t> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(ReadBuf, state_ != State::Done);
    if (buffer_->spare().empty()) buffer_->reserve(kChunk);
    Poll<std::size_t> got = reader_->poll_read(cx, buffer_->spare());
    if (got.is_pending()) {
      state_ = State::Waiting;
      return pending;
    }
    state_ = State::Done;
    buffer_->commit(got.value());
    return got;
  }

 private:
  enum class State { Start, Waiting, Done };
  R* reader_;
  BytesBuf* buffer_;
  State state_ = State::Start;
};

/// A future of one read from `reader` appended to `buffer`: the count, 0 at
/// the end of the stream. Both must outlive the future.
template <AsyncRead R>
ReadBuf<R> read_buf(R& reader, BytesBuf& buffer) noexcept {
  return ReadBuf<R>(reader, buffer);
}

}  // namespace pollux
