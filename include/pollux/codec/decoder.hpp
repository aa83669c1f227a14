// Decoder: turns the bytes read so far into frames, tokio-util's Decoder.
// decode(buffer) takes one whole frame off the front of the buffer, or
// answers nullopt and leaves the bytes for the next read to complete. Its
// Error can be made from a std::error_code, so that the I/O errors below
// reach the reader the same way as the codec's own.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <concepts>
#include <optional>
#include <system_error>

#include "pollux/core/result.hpp"
#include "pollux/io/bytes_buf.hpp"
#include "pollux/io/io_error.hpp"

namespace pollux {

/// A codec's reading side: `Item`, `Error` (constructible from
/// std::error_code) and decode(buffer). It may also have
/// decode_eof(buffer), called once the stream ended, for a last frame
/// without its terminator; without one, bytes left at the end are an
/// unexpected_eof error.
template <class D>
concept Decoder = requires(D& decoder, BytesBuf& buffer) {
  typename D::Item;
  typename D::Error;
  { decoder.decode(buffer) } -> std::same_as<Result<std::optional<typename D::Item>, typename D::Error>>;
}
&&std::constructible_from<typename D::Error, std::error_code>;

/// The frames of a decoder.
template <Decoder D>
using decoded_t = typename D::Item;

/// What Framed calls at the end of the stream: the decoder's decode_eof,
/// or decode and an unexpected_eof error for bytes left over.
template <Decoder D>
Result<std::optional<decoded_t<D>>, typename D::Error> decode_eof(D& decoder, BytesBuf& buffer) {
  if constexpr (requires { decoder.decode_eof(buffer); }) {
    return decoder.decode_eof(buffer);
  } else {
    auto frame = decoder.decode(buffer);
    if (frame && !frame.value() && !buffer.empty()) return typename D::Error(make_error_code(io_errc::unexpected_eof));
    return frame;
  }
}

}  // namespace pollux
