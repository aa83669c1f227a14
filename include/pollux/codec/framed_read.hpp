// FramedRead<R, D>: a Stream of the frames a Decoder finds in what a reader
// gives. Each item is a Result: a frame, or the error that ended the stream
// (the codec's, or the reader's I/O error); after an error, or once the
// reader ended and the bytes left are decoded, the stream ends. Memory is
// the read buffer: the codec's maximum frame plus one read. With
// set_read_deadline(d), a frame must be whole within d of its first byte,
// or the stream ends with an error of std::errc::timed_out.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/codec/decoder.hpp"
#include "pollux/codec/detail/framed_state.hpp"
#include "pollux/io/async_io.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {

/// A Stream of `Result<frame, error>` read from an owned reader.
template <AsyncRead R, Decoder D>
class [[nodiscard("streams do nothing unless polled")]] FramedRead {
 public:
  /// A frame, or the error that ended the stream.
  using Item = Result<decoded_t<D>, typename D::Error>;

  /// Frames of `decoder` read from `reader`.
  FramedRead(R reader, D decoder) : reader_(std::move(reader)), decoder_(std::move(decoder)) {}

  /// A frame not whole `limit` after its first byte ends the stream with
  /// std::errc::timed_out (a peer dripping a request a byte at a time).
  /// Set before the first poll.
  void set_read_deadline(Duration limit) { state_.deadline.emplace(limit); }

  /// The next frame, reading as much as it takes.
  Poll<std::optional<Item>> poll_next(Context & cx) { return detail::poll_next_frame(reader_, decoder_, state_, cx); }

  /// The reader.
  R& get_ref() noexcept { return reader_; }
  /// The decoder.
  D& decoder() noexcept { return decoder_; }
  /// The bytes read and not yet decoded.
  BytesBuf& read_buffer() noexcept { return state_.buffer; }

 private:
  R reader_;
  D decoder_;
  detail::ReadFrames state_;
};

}  // namespace pollux
