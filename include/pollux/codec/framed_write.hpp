// FramedWrite<W, E>: a Sink of the items an Encoder takes, written to an
// owned writer. Items are encoded into a write buffer and written out on
// flush (send() flushes; feed() does not, so many go in one write);
// poll_ready flushes first once 8 KiB wait, which bounds the buffer for a
// peer that does not read. I/O errors come back as the encoder's Error.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <utility>

#include "pollux/codec/detail/framed_state.hpp"
#include "pollux/codec/encoder.hpp"
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

  /// Sink: room, after a flush when 8 KiB or more wait.
  Poll<Result<void, Error>> poll_ready(Context & cx) { return detail::poll_ready_frames<Error>(writer_, buffer_, cx); }
  /// Sink: encodes `item` into the write buffer.
  template <class Item>
  requires Encoder<E, Item> Result<void, Error> start_send(Item && item) {
    return encoder_.encode(std::forward<Item>(item), buffer_);
  }
  /// Sink: writes everything encoded so far.
  Poll<Result<void, Error>> poll_flush(Context & cx) { return detail::poll_flush_frames<Error>(writer_, buffer_, cx); }
  /// Sink: flushes, then shuts the writer's direction down when it can.
  Poll<Result<void, Error>> poll_close(Context & cx) { return detail::poll_close_frames<Error>(writer_, buffer_, cx); }

  /// The writer.
  W& get_ref() noexcept { return writer_; }
  /// The encoder.
  E& encoder() noexcept { return encoder_; }
  /// The bytes encoded and not yet written.
  BytesBuf& write_buffer() noexcept { return buffer_; }

 private:
  W writer_;
  E encoder_;
  BytesBuf buffer_;
};

}  // namespace pollux
