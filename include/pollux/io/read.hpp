// read(stream, buffer): a future of one read: as many bytes as the stream
// has ready, at least one, or 0 at the end of the stream. Cancel-safe:
// destroyed before it is Ready, it has read nothing (the bytes stay in the
// socket) and it takes its waker back from the stream (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <span>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/io/async_io.hpp"

namespace pollux {

/// What read(stream, buffer) returns: a future of one read: as many bytes as the stream has ready,
/// at least one, or 0 at the end of the stream.
template <AsyncRead S>
class [[nodiscard("futures do nothing unless polled")]] Read {
 public:
  using Output = std::size_t;

  /// What read() makes; call that instead.
  Read(S & stream, std::span<std::byte> buffer) noexcept : stream_(&stream), buffer_(buffer) {}
  Read(Read && other) noexcept
      : stream_(other.stream_), buffer_(other.buffer_), state_(std::exchange(other.state_, State::Done)) {}
  Read& operator=(Read&&) = delete;
  ~Read() {
    if (state_ == State::Waiting) stream_->abandon_read();
  }

  /// Ready with the bytes of one read into the buffer (0 at the end of the stream).
  Poll<std::size_t> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Read, state_ != State::Done);
    Poll<std::size_t> result = stream_->poll_read(cx, buffer_);
    state_ = result.is_ready() ? State::Done : State::Waiting;
    return result;
  }

 private:
  enum class State { Start, Waiting, Done };

  S* stream_;
  std::span<std::byte> buffer_;
  State state_ = State::Start;
};

/// A future of one read from `stream` into `buffer`: the count, 0 at the end.
template <AsyncRead S>
Read<S> read(S& stream, std::span<std::byte> buffer) noexcept {
  return Read<S>(stream, buffer);
}

}  // namespace pollux
