// copy(reader, writer): a future that copies every byte of `reader` into
// `writer` until the reader's end, flushes the writer if it can, and is
// Ready with the number of bytes copied. One 8 KiB buffer, allocated with
// the future. Both must outlive it.
// Cancellation: not cancel-safe: destroyed half way, the bytes read but
// not yet written are lost.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstdint>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/io/async_io.hpp"
#include "pollux/io/detail/copy_buffer.hpp"

namespace pollux {

/// The future copy(reader, writer) returns.
template <AsyncRead R, AsyncWrite W>
class [[nodiscard("futures do nothing unless polled")]] Copy {
 public:
  using Output = std::uint64_t;

  /// What copy() makes; call that instead.
  Copy(R & reader, W & writer) : reader_(&reader), writer_(&writer) {}
  Copy(Copy && other) noexcept = default;
  Copy& operator=(Copy&&) = delete;
  ~Copy() {
    if (!done_ && reader_ != nullptr) buffer_.abandon(*reader_, *writer_);
  }

  /// Reads from the reader and writes to the writer until the reader ends; Ready with the bytes
  /// copied.
  Poll<std::uint64_t> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Copy, !done_);
    auto copied = buffer_.poll_copy(cx, *reader_, *writer_);
    done_ = copied.is_ready();
    return copied;
  }

 private:
  R* reader_;
  W* writer_;
  detail::CopyBuffer buffer_;
  bool done_ = false;
};

/// Copies `reader` into `writer` to the reader's end.
template <AsyncRead R, AsyncWrite W>
Copy<R, W> copy(R& reader, W& writer) {
  return Copy<R, W>(reader, writer);
}

}  // namespace pollux
