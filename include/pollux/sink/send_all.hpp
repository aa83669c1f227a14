// send_all(sink, stream): a future that sends every item of a stream into a
// sink, then flushes it. While the stream has nothing ready it flushes what
// it placed, so items never wait in the sink for the next one. The sink is
// borrowed; the stream is owned. Cancellation: destroyed half way, an item
// taken from the stream but not yet placed is dropped.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/sink/sink.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {

/// What send_all() returns: Ready with success once the stream ended and
/// every item is flushed, or with the sink's first error.
template <Stream St, Sink<item_t<St>> S>
class [[nodiscard("futures do nothing unless polled")]] SendAll {
 public:
  /// Success, or the sink's first error.
  using Output = Result<void, sink_error_t<S>>;

  /// What send_all() makes; call that instead.
  SendAll(S & sink, St stream) : sink_(&sink), stream_(std::move(stream)) {}

  /// Moves items from the stream into the sink while both are ready.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(SendAll, state_ != State::Done);
    while (state_ == State::Sending) {
      if (held_) {
        Poll<Output> room = sink_->poll_ready(cx);
        if (room.is_pending()) return pending;
        Output placed = room.value() ? sink_->start_send(std::move(*held_)) : std::move(room).value();
        held_.reset();
        if (!placed) return finish(std::move(placed));
      }
      Poll<std::optional<item_t<St>>> item = stream_.poll_next(cx);
      if (item.is_pending()) {
        Poll<Output> flushed = sink_->poll_flush(cx);  // the stream is waiting: send what we have
        if (flushed.is_ready() && !flushed.value()) return finish(std::move(flushed).value());
        return pending;
      }
      if (!item.value()) {
        state_ = State::Flushing;
        break;
      }
      held_.emplace(std::move(*item.value()));
    }
    Poll<Output> flushed = sink_->poll_flush(cx);
    if (flushed.is_pending()) return pending;
    return finish(std::move(flushed).value());
  }

 private:
  enum class State { Sending, Flushing, Done };

  Poll<Output> finish(Output result) {
    state_ = State::Done;
    return ready(std::move(result));
  }

  S* sink_;
  St stream_;
  std::optional<item_t<St>> held_;
  State state_ = State::Sending;
};

/// A future that sends every item of `stream` into `sink` and flushes it.
template <class S, Stream St>
requires Sink<S, item_t<St>> SendAll<St, S> send_all(S& sink, St stream) {
  return SendAll<St, S>(sink, std::move(stream));
}

}  // namespace pollux
