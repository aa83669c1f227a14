// Framed<Io, Codec>: one connection as a Stream of decoded frames and a
// Sink of encoded items, tokio-util's Framed: what FramedRead and
// FramedWrite do, on one socket with one codec. To read and write from two
// tasks, split the socket and use FramedRead and FramedWrite on its halves.
// set_read_deadline(d): a frame must be whole within d of its first byte
// (a peer dripping a request a byte at a time is cut off); and
// set_write_deadline(d): a flush may wait at most d for the peer to read.
// Either ends the connection with an error of std::errc::timed_out. A
// Framed must not move while a flush waits (rule 4): debug builds stop there.
// into_parts() and from_parts() take it apart and put it together again
// with the bytes it buffered, so a protocol can switch codec mid-stream.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>

#include "pollux/codec/decoder.hpp"
#include "pollux/codec/detail/framed_state.hpp"
#include "pollux/codec/encoder.hpp"
#include "pollux/codec/framed_parts.hpp"
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
  /// A Framed put together from `parts`: it decodes the bytes of
  /// `parts.read_buffer` before it reads, and writes those of
  /// `parts.write_buffer` before anything sent later.
  explicit Framed(FramedParts<Io, Codec> parts)
      : io_(std::move(parts.io)),
        codec_(std::move(parts.codec)),
        read_(detail::read_frames_from(std::move(parts.read_buffer))) {
    write_.buffer = std::move(parts.write_buffer);
    write_.backpressure_boundary = parts.backpressure_boundary;
  }
  /// The same as the constructor from parts, by name.
  static Framed from_parts(FramedParts<Io, Codec> parts) { return Framed(std::move(parts)); }

  /// Takes the Framed apart: the socket, the codec and both buffers. The
  /// deadlines are not parts (their timers go with this Framed): set them
  /// again on what is made next.
  FramedParts<Io, Codec> into_parts()&& {
    return FramedParts<Io, Codec>{std::move(io_), std::move(codec_), std::move(read_.buffer), std::move(write_.buffer),
                                  write_.backpressure_boundary};
  }
  /// The same socket and buffers with the codec `fn(codec())` makes: the
  /// bytes read and not yet decoded go to the new codec first.
  template <class Fn>
  auto map_codec(Fn && fn)&& {
    using NewCodec = std::decay_t<std::invoke_result_t<Fn, Codec&&>>;
    FramedParts<Io, Codec> parts = std::move(*this).into_parts();
    return Framed<Io, NewCodec>(FramedParts<Io, NewCodec>{
        std::move(parts.io), std::forward<Fn>(fn)(std::move(parts.codec)), std::move(parts.read_buffer),
        std::move(parts.write_buffer), parts.backpressure_boundary});
  }

  /// A frame not whole `limit` after its first byte ends the stream with
  /// std::errc::timed_out. Set before the first poll.
  void set_read_deadline(Duration limit) { read_.deadline.emplace(limit); }
  /// A flush that has waited `limit` for the peer fails with
  /// std::errc::timed_out. Set before the first send.
  void set_write_deadline(Duration limit) { write_.deadline.emplace(limit); }

  /// Stream: the next frame, reading as much as it takes.
  Poll<std::optional<Item>> poll_next(Context & cx) { return detail::poll_next_frame(io_, codec_, read_, cx); }

  /// Sink: room, after a flush once the backpressure boundary's bytes (8 KiB
  /// unless set) wait.
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

  /// How many encoded bytes may wait before poll_ready flushes first: a
  /// peer that does not read holds at most this much (and one item) here.
  /// At least 1.
  void set_backpressure_boundary(std::size_t bytes) noexcept { write_.backpressure_boundary = bytes == 0 ? 1 : bytes; }
  /// The boundary poll_ready flushes at.
  std::size_t backpressure_boundary() const noexcept { return write_.backpressure_boundary; }

  /// The socket (or whatever Io is).
  const Io& get_ref() const noexcept { return io_; }
  /// The socket, to change it: reading or writing it directly takes bytes
  /// past the codec.
  Io& get_mut() noexcept { return io_; }
  /// The codec.
  const Codec& codec() const noexcept { return codec_; }
  /// The codec, to change its settings.
  Codec& codec_mut() noexcept { return codec_; }
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
