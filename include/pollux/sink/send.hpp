// send(sink, item) and feed(sink, item): futures that wait for room in a
// sink, place one item, and (send only) flush. They borrow the sink, which
// must outlive them. Cancellation: destroyed before poll_ready answered,
// the item is dropped and the sink holds nothing of it; once placed, the
// item belongs to the sink (a later flush sends it).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/sink/sink.hpp"

namespace pollux {

/// What send() and feed() return: Ready with success once the item is in
/// the sink (feed) or in the sink and flushed (send), or with the sink's error.
template <class S, class Item, bool Flush>
class [[nodiscard("futures do nothing unless polled")]] SinkSend {
 public:
  /// Success, or the first error of poll_ready, start_send or poll_flush.
  using Output = Result<void, sink_error_t<S>>;

  /// What send() and feed() make; call those instead.
  SinkSend(S & sink, Item item) : sink_(&sink), item_(std::move(item)) {}

  /// Waits for room, places the item, then (send) waits for the flush.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(SinkSend, state_ != State::Done);
    if (state_ == State::Reserving) {
      Poll<Output> room = sink_->poll_ready(cx);
      if (room.is_pending()) return pending;
      Output placed = room.value() ? sink_->start_send(std::move(*item_)) : std::move(room).value();
      item_.reset();
      if (!placed || !Flush) {
        state_ = State::Done;
        return ready(std::move(placed));
      }
      state_ = State::Flushing;
    }
    Poll<Output> flushed = sink_->poll_flush(cx);
    if (flushed.is_ready()) state_ = State::Done;
    return flushed;
  }

 private:
  enum class State { Reserving, Flushing, Done };
  S* sink_;
  std::optional<Item> item_;
  State state_ = State::Reserving;
};

/// A future that places `item` in `sink` and flushes it: Ready once the
/// sink passed it on (and everything placed before it).
template <class S, class Item>
requires Sink<S, Item> SinkSend<S, Item, true> send(S& sink, Item item) {
  return SinkSend<S, Item, true>(sink, std::move(item));
}

/// A future that places `item` in `sink` without flushing: Ready as soon
/// as the sink took it. Feeding several items, then one flush(), batches
/// them into fewer writes.
template <class S, class Item>
requires Sink<S, Item> SinkSend<S, Item, false> feed(S& sink, Item item) {
  return SinkSend<S, Item, false>(sink, std::move(item));
}

}  // namespace pollux
