// FramedRead<R, D>: a Stream of the frames a Decoder finds in what a reader
// gives. Each item is a Result: a frame, or the error that ended the stream
// (the codec's, or the reader's I/O error); after an error, or once the
// reader ended and the bytes left are decoded, the stream ends. Memory is
// the read buffer: the codec's maximum frame plus one read. With
// set_read_deadline(d), a frame must be whole within d of its first byte,
// or the stream ends with an error of std::errc::timed_out.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <optional>
#include <type_traits>
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

  /// The same reader and buffered bytes with the decoder `fn(decoder())`
  /// makes: the bytes read and not yet decoded go to the new decoder first.
  template <class Fn>
  auto map_decoder(Fn && fn)&& {
    using NewDecoder = std::decay_t<std::invoke_result_t<Fn, D&&>>;
    return FramedRead<R, NewDecoder>(std::move(reader_), std::forward<Fn>(fn)(std::move(decoder_)),
                                     std::move(state_.buffer));
  }
  /// Frames of `decoder` from `reader`, starting with the bytes of
  /// `buffered` (read before, not yet decoded).
  FramedRead(R reader, D decoder, BytesBuf buffered)
      : reader_(std::move(reader)),
        decoder_(std::move(decoder)),
        state_(detail::read_frames_from(std::move(buffered))) {}

  /// The reader.
  const R& get_ref() const noexcept { return reader_; }
  /// The reader, to change it: reading it directly takes bytes past the decoder.
  R& get_mut() noexcept { return reader_; }
  /// The decoder.
  const D& decoder() const noexcept { return decoder_; }
  /// The decoder, to change its settings.
  D& decoder_mut() noexcept { return decoder_; }
  /// Gives up the framing: the reader, and the bytes read and not yet decoded.
  std::pair<R, BytesBuf> into_parts()&& { return {std::move(reader_), std::move(state_.buffer)}; }
  /// The bytes read and not yet decoded.
  BytesBuf& read_buffer() noexcept { return state_.buffer; }

 private:
  R reader_;
  D decoder_;
  detail::ReadFrames state_;
};

}  // namespace pollux
