// FramedWrite<W, E>: a Sink of the items an Encoder takes, written to an
// owned writer. Items are encoded into a write buffer and written out on
// flush (send() flushes; feed() does not, so many go in one write);
// poll_ready flushes first once 8 KiB wait (set_backpressure_boundary
// changes it), which bounds the buffer for a peer that does not read. I/O errors come back as the encoder's Error.
// set_write_deadline(d) bounds how long a flush may wait on such a peer.
// A FramedWrite must not move while a flush waits (rule 4): the future
// sending through it holds its address; debug builds stop at such a move.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <utility>

#include "pollux/codec/detail/framed_state.hpp"
#include "pollux/codec/encoder.hpp"
#include "pollux/core/detail/pin_check.hpp"
#include "pollux/io/async_io.hpp"

namespace pollux {

/// A Sink of items an Encoder turns into bytes for an owned writer.
template <AsyncWrite W, class E>
class [[nodiscard("sinks do nothing unless sent to")]] FramedWrite {
 public:
  /// The encoder's error (an I/O error of the writer included).
  using Error = typename E::Error;

  /// Items of `encoder` written to `writer`.
  FramedWrite(W writer, E encoder) : writer_(std::move(writer)), encoder_(std::move(encoder)) {}

  /// A flush that has waited `limit` for the writer fails with
  /// std::errc::timed_out (a peer that stopped reading, say). Set before
  /// the first send.
  void set_write_deadline(Duration limit) { out_.deadline.emplace(limit); }

  /// How many encoded bytes may wait before poll_ready flushes first: a
  /// peer that does not read holds at most this much (and one item) here.
  /// At least 1.
  void set_backpressure_boundary(std::size_t bytes) noexcept { out_.backpressure_boundary = bytes == 0 ? 1 : bytes; }
  /// The boundary poll_ready flushes at.
  std::size_t backpressure_boundary() const noexcept { return out_.backpressure_boundary; }

  /// Sink: room, after a flush once the backpressure boundary's bytes (8 KiB
  /// unless set) wait.
  Poll<Result<void, Error>> poll_ready(Context & cx) {
    return detail::pinned_while_pending(pin_, detail::poll_ready_frames<Error>(writer_, out_, cx));
  }
  /// Sink: encodes `item` into the write buffer.
  template <class Item>
  requires Encoder<E, Item> Result<void, Error> start_send(Item && item) {
    return encoder_.encode(std::forward<Item>(item), out_.buffer);
  }
  /// Sink: writes everything encoded so far.
  Poll<Result<void, Error>> poll_flush(Context & cx) {
    return detail::pinned_while_pending(pin_, detail::poll_flush_frames<Error>(writer_, out_, cx));
  }
  /// Sink: flushes, then shuts the writer's direction down when it can.
  Poll<Result<void, Error>> poll_close(Context & cx) {
    return detail::pinned_while_pending(pin_, detail::poll_close_frames<Error>(writer_, out_, cx));
  }

  /// The writer.
  const W& get_ref() const noexcept { return writer_; }
  /// The writer, to change it: writing it directly goes before what is buffered here.
  W& get_mut() noexcept { return writer_; }
  /// The encoder.
  const E& encoder() const noexcept { return encoder_; }
  /// The encoder, to change its settings.
  E& encoder_mut() noexcept { return encoder_; }
  /// The bytes encoded and not yet written.
  BytesBuf& write_buffer() noexcept { return out_.buffer; }

 private:
  [[no_unique_address]] detail::PinCheck<FramedWrite> pin_;  // first: its check runs before the members move
  W writer_;
  E encoder_;
  detail::WriteFrames out_;
};

}  // namespace pollux
