// flush(sink) and close(sink): futures of a sink's poll_flush and
// poll_close. close flushes first, then ends the sink (a socket's writing
// direction is shut down). They borrow the sink, which must outlive them;
// destroyed half way, what was not yet flushed stays in the sink.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/sink/sink.hpp"

namespace pollux {

/// What flush(sink) and close(sink) return: Ready with success once the
/// sink is flushed (or closed), or with its error.
template <BasicSink S, bool Close>
class [[nodiscard("futures do nothing unless polled")]] SinkFlush {
 public:
  /// Success, or the sink's error.
  using Output = Result<void, sink_error_t<S>>;

  /// What flush() and close() make; call those instead.
  explicit SinkFlush(S & sink) noexcept : sink_(&sink) {}

  /// Polls the sink's poll_flush (or poll_close) once.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(SinkFlush, !done_);
    Poll<Output> result = Close ? sink_->poll_close(cx) : sink_->poll_flush(cx);
    done_ = result.is_ready();
    return result;
  }

 private:
  S* sink_;
  bool done_ = false;
};

/// A future that is Ready once everything placed in `sink` has gone on.
template <BasicSink S>
SinkFlush<S, false> flush(S& sink) noexcept {
  return SinkFlush<S, false>(sink);
}

/// A future that flushes `sink`, then ends it; nothing may be sent after.
template <BasicSink S>
SinkFlush<S, true> close(S& sink) noexcept {
  return SinkFlush<S, true>(sink);
}

}  // namespace pollux
