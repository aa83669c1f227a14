// ReaderStream<R>: a byte stream read as a Stream of chunks, tokio-util's
// ReaderStream: each item is what one read gave (at most the capacity), and
// the stream ends at the reader's end. An error of the reader is the last
// item, as a std::error_code, so a consumer that collects or forwards the
// chunks sees it in the stream instead of as an exception.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <optional>
#include <system_error>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/result.hpp"
#include "pollux/io/async_io.hpp"
#include "pollux/io/bytes_buf.hpp"

namespace pollux {

/// A Stream of the chunks an owned reader gives, one read each.
template <AsyncRead R>
class [[nodiscard("streams do nothing unless polled")]] ReaderStream {
 public:
  using Item = Result<BytesBuf, std::error_code>;

  /// The chunk size when none is given: one page.
  static constexpr std::size_t kDefaultCapacity = 4096;

  /// Chunks of at most `capacity` bytes (at least 1) read from `reader`.
  explicit ReaderStream(R reader, std::size_t capacity = kDefaultCapacity)
      : reader_(std::move(reader)), capacity_(capacity == 0 ? 1 : capacity) {}

  /// The next chunk, an error (then the end), or the end once the reader ends.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (ended_) return ready(std::optional<Item>());
    BytesBuf chunk;
    chunk.reserve(capacity_);
    std::size_t got = 0;
    try {
      Poll<std::size_t> read = reader_.poll_read(cx, chunk.spare().first(capacity_));
      if (read.is_pending()) return pending;
      got = read.value();
    } catch (const std::system_error& error) {
      ended_ = true;
      return ready(std::optional<Item>(Item(error.code())));
    }
    if (got == 0) {
      ended_ = true;
      return ready(std::optional<Item>());
    }
    chunk.commit(got);
    return ready(std::optional<Item>(Item(std::move(chunk))));
  }

  /// The reader.
  const R& get_ref() const noexcept { return reader_; }
  /// The reader, to change it.
  R& get_mut() noexcept { return reader_; }
  /// Gives the reader back.
  R into_inner()&& { return std::move(reader_); }

 private:
  R reader_;
  std::size_t capacity_;
  bool ended_ = false;
};

}  // namespace pollux
