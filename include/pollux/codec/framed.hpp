// Framed<Io, Codec>: one connection as a Stream of decoded frames and a
// Sink of encoded items, tokio-util's Framed: what FramedRead and
// FramedWrite do, on one socket with one codec. To read and write from two
// tasks, split the socket and use FramedRead and FramedWrite on its halves.
// set_read_deadline(d): a frame must be whole within d of its first byte
// (a peer dripping a request a byte at a time is cut off); and
// set_write_deadline(d): a flush may wait at most d for the peer to read.
// Either ends the connection with an error of std::errc::timed_out. A
// Framed must not move while a flush waits (rule 4): debug builds stop there.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/codec/decoder.hpp"
#include "pollux/codec/detail/framed_state.hpp"
#include "pollux/codec/encoder.hpp"
#include "pollux/core/detail/pin_check.hpp"
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

  /// A frame not whole `limit` after its first byte ends the stream with
  /// std::errc::timed_out. Set before the first poll.
  void set_read_deadline(Duration limit) { read_.deadline.emplace(limit); }
  /// A flush that has waited `limit` for the peer fails with
  /// std::errc::timed_out. Set before the first send.
  void set_write_deadline(Duration limit) { write_.deadline.emplace(limit); }

  /// Stream: the next frame, reading as much as it takes.
  Poll<std::optional<Item>> poll_next(Context & cx) { return detail::poll_next_frame(io_, codec_, read_, cx); }

  /// Sink: room, after a flush when 8 KiB or more wait.
  Poll<Result<void, Error>> poll_ready(Context & cx) {
    return detail::pinned_while_pending(pin_, detail::poll_ready_frames<Error>(io_, write_, cx));
  }
  /// Sink: encodes `item` into the write buffer.
  template <class T>
  requires Encoder<Codec, T> Result<void, Error> start_send(T && item) {
    return codec_.encode(std::forward<T>(item), write_.buffer);
  }
  /// Sink: writes everything encoded so far.
  Poll<Result<void, Error>> poll_flush(Context & cx) {
    return detail::pinned_while_pending(pin_, detail::poll_flush_frames<Error>(io_, write_, cx));
  }
  /// Sink: flushes, then shuts the writing direction down when it can.
  Poll<Result<void, Error>> poll_close(Context & cx) {
    return detail::pinned_while_pending(pin_, detail::poll_close_frames<Error>(io_, write_, cx));
  }

  /// The socket (or whatever Io is).
  Io& get_ref() noexcept { return io_; }
  /// The codec.
  Codec& codec() noexcept { return codec_; }
  /// The bytes read and not yet decoded.
  BytesBuf& read_buffer() noexcept { return read_.buffer; }
  /// The bytes encoded and not yet written.
  BytesBuf& write_buffer() noexcept { return write_.buffer; }

 private:
  [[no_unique_address]] detail::PinCheck<Framed> pin_;  // first: its check runs before the members move
  Io io_;
  Codec codec_;
  detail::ReadFrames read_;
  detail::WriteFrames write_;
};

}  // namespace pollux
