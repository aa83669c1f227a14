// AsyncRead and AsyncWrite: what a byte stream offers so that the generic
// futures (read, write, read_exact, write_all) can drive it, as Rust's
// AsyncRead/AsyncWrite do; AsyncFlush, AsyncShutdown and AsyncBufRead for
// buffered I/O, line reading and copying. poll_read/poll_write follow the contract of
// poll: Ready with a count, or Pending with the waker of this poll stored
// (rule 2); abandon(interest) takes that waker back when the
// future that got Pending is destroyed instead of polled again (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <concepts>
#include <cstddef>
#include <span>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/io/interest.hpp"

namespace pollux {

/// poll_read gives the number of bytes read into the buffer; 0 means the
/// end of the stream (for a non-empty buffer). Errors are thrown.
template <class S>
concept AsyncRead = requires(S& stream, Context& cx, std::span<std::byte> buffer) {
  { stream.poll_read(cx, buffer) } -> std::same_as<Poll<std::size_t>>;
  { stream.abandon(Interest::Read) }
  noexcept;
};

/// poll_write gives the number of bytes written from the buffer: at least
/// one for a non-empty buffer. Errors are thrown.
template <class S>
concept AsyncWrite = requires(S& stream, Context& cx, std::span<const std::byte> buffer) {
  { stream.poll_write(cx, buffer) } -> std::same_as<Poll<std::size_t>>;
  { stream.abandon(Interest::Write) }
  noexcept;
};

/// A writer that may hold bytes back (a BufWriter): poll_flush is Ready
/// once every byte written so far went on to the device below.
template <class S>
concept AsyncFlush = AsyncWrite<S> && requires(S& stream, Context& cx) {
  { stream.poll_flush(cx) } -> std::same_as<Poll<void>>;
};

/// A writer that can end its direction of the stream: poll_shutdown
/// flushes, then tells the peer no more bytes come (a TCP FIN).
template <class S>
concept AsyncShutdown = AsyncWrite<S> && requires(S& stream, Context& cx) {
  { stream.poll_shutdown(cx) } -> std::same_as<Poll<void>>;
};

/// A reader with a buffer of its own (BufReader): poll_fill_buf gives the
/// bytes buffered, reading more when there are none (an empty span: the
/// end of the stream); consume(n) marks n of them used.
template <class S>
concept AsyncBufRead = AsyncRead<S> && requires(S& stream, Context& cx, std::size_t n) {
  { stream.poll_fill_buf(cx) } -> std::same_as<Poll<std::span<const std::byte>>>;
  { stream.consume(n) }
  noexcept;
};

}  // namespace pollux
