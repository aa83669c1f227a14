// AsyncRead and AsyncWrite: what a byte stream offers so that the generic
// futures (read, write, read_exact, write_all) can drive it, as Rust's
// AsyncRead/AsyncWrite do. poll_read/poll_write follow the contract of
// poll: Ready with a count, or Pending with the waker of this poll stored
// (rule 2); abandon_read/abandon_write take that waker back when the
// future that got Pending is destroyed instead of polled again (rule 5).
#pragma once

#include <concepts>
#include <cstddef>
#include <span>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"

namespace pollux {

// poll_read gives the number of bytes read into the buffer; 0 means the
// end of the stream (for a non-empty buffer). Errors are thrown.
template <class S>
concept AsyncRead = requires(S& stream, Context& cx, std::span<std::byte> buffer) {
  { stream.poll_read(cx, buffer) } -> std::same_as<Poll<std::size_t>>;
  { stream.abandon_read() } noexcept;
};

// poll_write gives the number of bytes written from the buffer: at least
// one for a non-empty buffer. Errors are thrown.
template <class S>
concept AsyncWrite = requires(S& stream, Context& cx, std::span<const std::byte> buffer) {
  { stream.poll_write(cx, buffer) } -> std::same_as<Poll<std::size_t>>;
  { stream.abandon_write() } noexcept;
};

}  // namespace pollux
