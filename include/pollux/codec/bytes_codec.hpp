// BytesCodec: no framing at all; each read's bytes are one item, and each
// item sent is written as it is. What turns a socket into a Stream and a
// Sink of byte buffers.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <optional>
#include <span>
#include <string_view>

#include "pollux/codec/frame_error.hpp"
#include "pollux/core/result.hpp"
#include "pollux/io/bytes_buf.hpp"

namespace pollux {

/// The bytes as they come, and as they are given.
class BytesCodec {
 public:
  /// The bytes of one read.
  using Item = BytesBuf;
  /// Only Io, from the stream below.
  using Error = FrameError;

  /// Everything buffered, as one item; nullopt when nothing is.
  Result<std::optional<BytesBuf>, FrameError> decode(BytesBuf& buffer) {
    if (buffer.empty()) return std::optional<BytesBuf>();
    return std::optional<BytesBuf>(buffer.split_to(buffer.size()));
  }

  /// Appends `bytes`.
  Result<void, FrameError> encode(std::span<const std::byte> bytes, BytesBuf& buffer) {
    buffer.append(bytes);
    return {};
  }
  /// Appends a BytesBuf's bytes.
  Result<void, FrameError> encode(const BytesBuf& bytes, BytesBuf& buffer) { return encode(bytes.bytes(), buffer); }
  /// Appends the characters of `text`.
  Result<void, FrameError> encode(std::string_view text, BytesBuf& buffer) {
    buffer.append(text);
    return {};
  }
};

}  // namespace pollux
