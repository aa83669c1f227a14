// lines(reader): a Stream of the lines of a byte stream, as std::string,
// without their "\n" or "\r\n"; a last line without a newline counts. A
// reader that is not buffered is wrapped in a BufReader. A line longer
// than `max_line` bytes (64 KiB by default) is an error, thrown from
// poll_next as a std::system_error with code io_errc::line_too_long,
// rather than memory spent without bound on a peer that never sends a
// newline. Reads go through the reader's buffer: one system call per
// buffer, however short the lines.
// Cancellation: next(lines) destroyed before it was Ready loses nothing; a
// partly read line waits inside the stream.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "pollux/io/async_io.hpp"
#include "pollux/io/buf_reader.hpp"
#include "pollux/io/io_error.hpp"
#include "pollux/io/read_until.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {

/// The stream lines(reader) returns.
template <AsyncBufRead R>
class [[nodiscard("streams do nothing unless polled")]] Lines {
 public:
  using Item = std::string;

  /// The default longest line, in bytes.
  static constexpr std::size_t kDefaultMaxLine = 64 * 1024;

  /// What lines() makes; call that instead.
  explicit Lines(R reader, std::size_t max_line = kDefaultMaxLine) : reader_(std::move(reader)), max_line_(max_line) {}

  /// The next line, without its newline; nullopt at the end of the input.
  Poll<std::optional<std::string>> poll_next(Context & cx) {
    for (;;) {
      auto buffered = reader_.poll_fill_buf(cx);
      if (buffered.is_pending()) return pending;
      if (buffered.value().empty()) {  // the end of the stream
        if (line_.empty()) return stream_end;
        return ready(take_line());
      }
      auto [bytes, found] = detail::until_delim(buffered.value(), std::byte{'\n'});
      std::size_t content = bytes.size() - (found ? 1 : 0);
      if (line_.size() + content > max_line_) detail::throw_line_too_long("pollux::lines", max_line_);
      detail::append_bytes(line_, bytes.first(content));
      reader_.consume(bytes.size());
      if (found) {
        if (!line_.empty() && line_.back() == '\r') line_.pop_back();
        return ready(take_line());
      }
    }
  }

  /// The reader, for what is buffered after the lines read so far.
  R& get_ref() noexcept { return reader_; }

 private:
  std::string take_line() {
    std::string line = std::move(line_);
    line_.clear();  // a moved-from string is valid but unspecified
    return line;
  }

  R reader_;
  std::size_t max_line_;
  std::string line_;  // the line read so far
};

/// The lines of a buffered `reader`.
template <AsyncBufRead R>
Lines<R> lines(R reader, std::size_t max_line = Lines<R>::kDefaultMaxLine) {
  return Lines<R>(std::move(reader), max_line);
}

/// The lines of `reader`, through a BufReader.
template <AsyncRead R>
requires(!AsyncBufRead<R>) Lines<BufReader<R>> lines(R reader,
                                                     std::size_t max_line = Lines<BufReader<R>>::kDefaultMaxLine) {
  return Lines<BufReader<R>>(BufReader<R>(std::move(reader)), max_line);
}

}  // namespace pollux
