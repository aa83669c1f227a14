// write(stream, bytes): a future of one write: how many of the bytes the
// stream took, at least one for a non-empty buffer. Cancel-safe: destroyed
// before it is Ready, it has written nothing, and it takes its waker back
// from the stream (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <span>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/io/async_io.hpp"

namespace pollux {

/// What write(stream, bytes) returns: a future of one write: how many of the bytes the stream took,
/// at least one for a non-empty buffer.
template <AsyncWrite S>
class [[nodiscard("futures do nothing unless polled")]] Write {
 public:
  using Output = std::size_t;

  /// What write() makes; call that instead.
  Write(S & stream, std::span<const std::byte> bytes) noexcept : stream_(&stream), bytes_(bytes) {}
  Write(Write && other) noexcept
      : stream_(other.stream_), bytes_(other.bytes_), state_(std::exchange(other.state_, State::Done)) {}
  Write& operator=(Write&&) = delete;
  ~Write() {
    if (state_ == State::Waiting) stream_->abandon_write();
  }

  /// Ready with the bytes of one write (maybe fewer than given).
  Poll<std::size_t> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Write, state_ != State::Done);
    Poll<std::size_t> result = stream_->poll_write(cx, bytes_);
    state_ = result.is_ready() ? State::Done : State::Waiting;
    return result;
  }

 private:
  enum class State { Start, Waiting, Done };

  S* stream_;
  std::span<const std::byte> bytes_;
  State state_ = State::Start;
};

/// A future of one write of `bytes` to `stream`: the count written.
template <AsyncWrite S>
Write<S> write(S& stream, std::span<const std::byte> bytes) noexcept {
  return Write<S>(stream, bytes);
}

}  // namespace pollux
