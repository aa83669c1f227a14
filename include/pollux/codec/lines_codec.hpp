// LinesCodec: frames are lines ending in "\n" (a "\r" before it is dropped
// too); a last line without its newline still comes at the end of the
// stream. A line longer than the maximum is an error as soon as that many
// bytes came without a newline, so a peer cannot make the buffer grow
// past the maximum; the codec then discards that line up to its newline
// and decodes the next, reporting each long line once (tokio-util's
// behaviour). Each byte is searched once, however a line arrives.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <algorithm>
#include <cstdint>
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

  /// The next whole line, nullopt until its newline came, or TooLong once
  /// per over-long line (the next call discards the rest of that line).
  Result<std::optional<std::string>, FrameError> decode(BytesBuf& buffer) {
    for (;;) {
      std::string_view bytes = buffer.view();
      std::size_t window = std::min(bytes.size(), with_line_end(max_length_));
      std::size_t newline = bytes.substr(0, window).find('\n', searched_);
      if (discarding_) {
        // The rest of a line already reported: drop what was searched,
        // up to and with its newline, and look again behind it.
        searched_ = 0;
        if (newline == std::string_view::npos) {
          buffer.consume(window);
          if (buffer.empty()) return std::optional<std::string>();
          continue;
        }
        buffer.consume(newline + 1);
        discarding_ = false;
        continue;
      }
      if (newline == std::string_view::npos) {
        if (bytes.size() >= with_line_end(max_length_)) {
          discarding_ = true;
          searched_ = 0;
          return too_long();
        }
        searched_ = window;
        return std::optional<std::string>();
      }
      searched_ = 0;
      std::string_view line = bytes.substr(0, newline);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.size() > max_length_) {
        buffer.consume(newline + 1);  // the whole line is here: nothing left to discard
        return too_long();
      }
      std::string frame(line);
      buffer.consume(newline + 1);
      return std::optional<std::string>(std::move(frame));
    }
  }

  /// At the end of the stream: the lines left, then the last line even
  /// without its newline (none when it is the rest of an over-long one).
  Result<std::optional<std::string>, FrameError> decode_eof(BytesBuf& buffer) {
    auto line = decode(buffer);
    if (!line || line.value() || buffer.empty()) return line;
    searched_ = 0;
    std::string_view rest = buffer.view();
    if (rest.back() == '\r') rest.remove_suffix(1);
    if (rest.size() > max_length_) {
      buffer.clear();
      return too_long();
    }
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
  // The bytes a line of `length` may take with its "\r\n": saturated, so
  // that SIZE_MAX, "no limit", does not wrap round to a limit of 1.
  static constexpr std::size_t with_line_end(std::size_t length) noexcept {
    return length > SIZE_MAX - 2 ? SIZE_MAX : length + 2;
  }

  FrameError too_long() const {
    return FrameError::too_long("a line longer than " + std::to_string(max_length_) + " bytes");
  }

  std::size_t max_length_;
  std::size_t searched_ = 0;  // bytes already searched for a newline
  bool discarding_ = false;   // inside an over-long line already reported
};

}  // namespace pollux
