// flush(writer) and shutdown(writer): futures of poll_flush and
// poll_shutdown, for the writers that have them (BufWriter, TcpStream and
// its write halves). shutdown flushes first, then ends the writing
// direction, so the peer reads the end of the stream.
// Cancellation: destroyed half way, the bytes not yet flushed stay in the
// writer's buffer; the writer's waker is taken back (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/io/async_io.hpp"

namespace pollux {

namespace detail {
enum class FlushKind { Flush, Shutdown };
}

/// The future flush(writer) or shutdown(writer) returns.
template <class W, detail::FlushKind Kind>
class [[nodiscard("futures do nothing unless polled")]] FlushFuture {
 public:
  using Output = void;

  /// What flush() makes; call that instead.
  explicit FlushFuture(W & writer) noexcept : writer_(&writer) {}
  FlushFuture(FlushFuture && other) noexcept
      : writer_(other.writer_), state_(std::exchange(other.state_, State::Done)) {}
  FlushFuture& operator=(FlushFuture&&) = delete;
  ~FlushFuture() {
    if (state_ == State::Waiting) writer_->abandon(Interest::Write);
  }

  /// Ready once the writer has flushed everything it buffered.
  Poll<void> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(FlushFuture, state_ != State::Done);
    Poll<void> done = Kind == detail::FlushKind::Flush ? writer_->poll_flush(cx) : writer_->poll_shutdown(cx);
    state_ = done.is_ready() ? State::Done : State::Waiting;
    return done;
  }

 private:
  enum class State { Start, Waiting, Done };
  W* writer_;
  State state_ = State::Start;
};

/// Ready once every byte written to `writer` went on to the device.
template <AsyncFlush W>
FlushFuture<W, detail::FlushKind::Flush> flush(W& writer) noexcept {
  return FlushFuture<W, detail::FlushKind::Flush>(writer);
}

/// Flushes `writer`, then ends its writing direction.
template <AsyncShutdown W>
FlushFuture<W, detail::FlushKind::Shutdown> shutdown(W& writer) noexcept {
  return FlushFuture<W, detail::FlushKind::Shutdown>(writer);
}

}  // namespace pollux
