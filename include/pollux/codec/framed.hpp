// Framed<Io, Codec>: one connection as a Stream of decoded frames and a
// Sink of encoded items, tokio-util's Framed: what FramedRead and
// FramedWrite do, on one socket with one codec. To read and write from two
// tasks, split the socket and use FramedRead and FramedWrite on its halves.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/codec/decoder.hpp"
#include "pollux/codec/detail/framed_state.hpp"
#include "pollux/codec/encoder.hpp"
#include "pollux/io/async_io.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {

/// A Stream of `Result<frame, error>` and a Sink of items, over one owned
/// reader-and-writer.
template <class Io, Decoder Codec>
requires AsyncRead<Io> && AsyncWrite<Io>
class [[nodiscard("streams do nothing unless polled")]] Framed {
 public:
  /// A frame, or the error that ended the stream.
  using Item = Result<decoded_t<Codec>, typename Codec::Error>;
  /// The codec's error (an I/O error included).
  using Error = typename Codec::Error;

  /// Frames of `codec` over `io`.
  Framed(Io io, Codec codec) : io_(std::move(io)), codec_(std::move(codec)) {}

  /// Stream: the next frame, reading as much as it takes.
  Poll<std::optional<Item>> poll_next(Context & cx) { return detail::poll_next_frame(io_, codec_, read_, cx); }

  /// Sink: room, after a flush when 8 KiB or more wait.
  Poll<Result<void, Error>> poll_ready(Context & cx) { return detail::poll_ready_frames<Error>(io_, write_, cx); }
  /// Sink: encodes `item` into the write buffer.
  template <class T>
  requires Encoder<Codec, T> Result<void, Error> start_send(T && item) {
    return codec_.encode(std::forward<T>(item), write_);
  }
  /// Sink: writes everything encoded so far.
  Poll<Result<void, Error>> poll_flush(Context & cx) { return detail::poll_flush_frames<Error>(io_, write_, cx); }
  /// Sink: flushes, then shuts the writing direction down when it can.
  Poll<Result<void, Error>> poll_close(Context & cx) { return detail::poll_close_frames<Error>(io_, write_, cx); }

  /// The socket (or whatever Io is).
  Io& get_ref() noexcept { return io_; }
  /// The codec.
  Codec& codec() noexcept { return codec_; }
  /// The bytes read and not yet decoded.
  BytesBuf& read_buffer() noexcept { return read_.buffer; }
  /// The bytes encoded and not yet written.
  BytesBuf& write_buffer() noexcept { return write_; }

 private:
  Io io_;
  Codec codec_;
  detail::ReadFrames read_;
  BytesBuf write_;
};

}  // namespace pollux
