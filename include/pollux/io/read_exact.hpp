// read_exact(stream, buffer): reads until the buffer is full. The end of
// the stream before that throws std::system_error(io_errc::unexpected_eof)
// saying how many bytes came. Not cancel-safe: destroyed half way, the
// bytes already read are in the buffer but the caller cannot know how many.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <span>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/io/async_io.hpp"
#include "pollux/io/io_error.hpp"

namespace pollux {

/// What read_exact(stream, buffer) returns: reads until the buffer is full.
template <AsyncRead S>
class [[nodiscard("futures do nothing unless polled")]] ReadExact {
 public:
  using Output = void;

  /// What read_exact() makes; call that instead.
  ReadExact(S & stream, std::span<std::byte> buffer) noexcept : stream_(&stream), buffer_(buffer) {}
  ReadExact(ReadExact && other) noexcept
      : stream_(other.stream_),
        buffer_(other.buffer_),
        filled_(other.filled_),
        state_(std::exchange(other.state_, State::Done)) {}
  ReadExact& operator=(ReadExact&&) = delete;
  ~ReadExact() {
    if (state_ == State::Waiting) stream_->abandon(Interest::Read);
  }

  /// Reads until the buffer is full; Ready then (it throws if the stream ends first).
  Poll<void> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(ReadExact, state_ != State::Done);
    while (filled_ < buffer_.size()) {
      Poll<std::size_t> got = stream_->poll_read(cx, buffer_.subspan(filled_));
      if (got.is_pending()) {
        state_ = State::Waiting;
        return pending;
      }
      if (got.value() == 0) {
        state_ = State::Done;
        detail::throw_unexpected_eof("pollux::read_exact", filled_, buffer_.size());
      }
      filled_ += got.value();
    }
    state_ = State::Done;
    return ready();
  }

 private:
  enum class State { Reading, Waiting, Done };

  S* stream_;
  std::span<std::byte> buffer_;
  std::size_t filled_ = 0;
  State state_ = State::Reading;
};

/// A future that fills `buffer` from `stream` whole (unexpected_eof if it ends first).
template <AsyncRead S>
ReadExact<S> read_exact(S& stream, std::span<std::byte> buffer) noexcept {
  return ReadExact<S>(stream, buffer);
}

}  // namespace pollux
