// LengthDelimitedCodec: each frame is a 4-byte big-endian length, then that
// many bytes, tokio-util's default framing. A length above the maximum is
// an error before any of the frame is buffered; the buffer grows to a
// frame's size once, when its header came.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "pollux/codec/frame_error.hpp"
#include "pollux/core/result.hpp"
#include "pollux/io/bytes_buf.hpp"

namespace pollux {

/// Frames of at most max_length bytes behind a 4-byte big-endian length.
class LengthDelimitedCodec {
 public:
  /// A frame's bytes, without the length.
  using Item = BytesBuf;
  /// TooLong for a length above the maximum; Io from the stream below.
  using Error = FrameError;

  /// The limit when none is given: 8 MiB.
  static constexpr std::size_t kDefaultMaxLength = 8 * 1024 * 1024;
  /// The size of the length in front of each frame.
  static constexpr std::size_t kHeader = 4;

  /// Frames of at most `max_length` bytes.
  explicit LengthDelimitedCodec(std::size_t max_length = kDefaultMaxLength) noexcept : max_length_(max_length) {}

  /// The longest frame it accepts (and sends).
  std::size_t max_length() const noexcept { return max_length_; }

  /// The next whole frame, nullopt until all of it came, or TooLong.
  Result<std::optional<BytesBuf>, FrameError> decode(BytesBuf& buffer) {
    if (buffer.size() < kHeader) return std::optional<BytesBuf>();
    std::uint64_t length = 0;
    for (std::size_t i = 0; i < kHeader; ++i) length = length << 8 | std::to_integer<std::uint64_t>(buffer[i]);
    if (length > max_length_) return too_long(length);
    if (buffer.size() - kHeader < length) {
      buffer.reserve(kHeader + length - buffer.size());  // one growth for the whole frame
      return std::optional<BytesBuf>();
    }
    buffer.consume(kHeader);
    return std::optional<BytesBuf>(buffer.split_to(length));
  }

  /// Appends the length of `frame`, then its bytes; TooLong above the maximum.
  Result<void, FrameError> encode(std::span<const std::byte> frame, BytesBuf& buffer) {
    if (frame.size() > max_length_) return too_long(frame.size());
    std::array<std::byte, kHeader> header;
    for (std::size_t i = 0; i < kHeader; ++i) header[i] = std::byte(frame.size() >> (8 * (kHeader - 1 - i)) & 0xff);
    buffer.reserve(kHeader + frame.size());
    buffer.append(header);
    buffer.append(frame);
    return {};
  }
  /// encode() of a BytesBuf's bytes.
  Result<void, FrameError> encode(const BytesBuf& frame, BytesBuf& buffer) { return encode(frame.bytes(), buffer); }
  /// encode() of the characters of `text`.
  Result<void, FrameError> encode(std::string_view text, BytesBuf& buffer) {
    return encode(std::as_bytes(std::span(text.data(), text.size())), buffer);
  }

 private:
  FrameError too_long(std::uint64_t length) const {
    return FrameError::too_long("a frame of " + std::to_string(length) + " bytes, above the maximum of "
                                + std::to_string(max_length_));
  }

  std::size_t max_length_;
};

}  // namespace pollux
