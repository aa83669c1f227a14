// LinesCodec: frames are lines ending in "\n" (a "\r" before it is dropped
// too); a last line without its newline still comes at the end of the
// stream. A line longer than the maximum is an error as soon as that many
// bytes came without a newline, so a peer cannot make the buffer grow
// past the maximum. Each byte is searched once, however a line arrives.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "pollux/codec/frame_error.hpp"
#include "pollux/core/result.hpp"
#include "pollux/io/bytes_buf.hpp"

namespace pollux {

/// Lines of text, each at most max_length bytes (its "\r\n" not counted).
class LinesCodec {
 public:
  /// A line, without its "\n" or "\r\n".
  using Item = std::string;
  /// TooLong for an over-long line; Io from the stream below.
  using Error = FrameError;

  /// The limit when none is given: 64 KiB.
  static constexpr std::size_t kDefaultMaxLength = 64 * 1024;

  /// Lines of at most `max_length` bytes.
  explicit LinesCodec(std::size_t max_length = kDefaultMaxLength) noexcept : max_length_(max_length) {}

  /// The longest line it accepts.
  std::size_t max_length() const noexcept { return max_length_; }

  /// The next whole line, nullopt until its newline came, or TooLong.
  Result<std::optional<std::string>, FrameError> decode(BytesBuf& buffer) {
    std::string_view bytes = buffer.view();
    std::size_t limit = std::min(bytes.size(), max_length_ + 2);  // the line, then "\r\n"
    std::size_t newline = bytes.substr(0, limit).find('\n', searched_);
    if (newline == std::string_view::npos) {
      if (bytes.size() > max_length_ + 1) return too_long();
      searched_ = limit;
      return std::optional<std::string>();
    }
    searched_ = 0;
    std::string_view line = bytes.substr(0, newline);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > max_length_) return too_long();
    std::string frame(line);
    buffer.consume(newline + 1);
    return std::optional<std::string>(std::move(frame));
  }

  /// At the end of the stream: the lines left, then the last line even
  /// without its newline.
  Result<std::optional<std::string>, FrameError> decode_eof(BytesBuf& buffer) {
    auto line = decode(buffer);
    if (!line || line.value() || buffer.empty()) return line;
    searched_ = 0;
    std::string_view rest = buffer.view();
    if (rest.back() == '\r') rest.remove_suffix(1);
    if (rest.size() > max_length_) return too_long();
    std::string frame(rest);
    buffer.clear();
    return std::optional<std::string>(std::move(frame));
  }

  /// Appends `line` and "\n". The line is taken as it is: a newline inside
  /// it makes two lines for the reader.
  Result<void, FrameError> encode(std::string_view line, BytesBuf& buffer) {
    buffer.reserve(line.size() + 1);
    buffer.append(line);
    buffer.append(std::string_view("\n"));
    return {};
  }

 private:
  FrameError too_long() const {
    return FrameError::too_long("a line longer than " + std::to_string(max_length_) + " bytes");
  }

  std::size_t max_length_;
  std::size_t searched_ = 0;  // bytes already searched for a newline
};

}  // namespace pollux
