// write(stream, bytes): a future of one write: how many of the bytes the
// stream took, at least one for a non-empty buffer. Cancel-safe: destroyed
// before it is Ready, it has written nothing, and it takes its waker back
// from the stream (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <span>

#include "pollux/io/async_io.hpp"
#include "pollux/io/io_future.hpp"

namespace pollux {

/// The operation of write(stream, bytes): one poll_write of the bytes.
template <AsyncWrite S>
class WriteOp {
 public:
  using Output = std::size_t;

  /// The operation on `stream`; both must outlive its future.
  WriteOp(S& stream, std::span<const std::byte> bytes) noexcept : stream_(&stream), bytes_(bytes) {}

  /// One poll_write.
  Poll<std::size_t> poll(Context& cx) { return stream_->poll_write(cx, bytes_); }
  /// Gives the stream's write waker back.
  void abandon() noexcept { stream_->abandon(Interest::Write); }

 private:
  S* stream_;
  std::span<const std::byte> bytes_;
};

/// What write(stream, bytes) returns: a future of one write: how many of the bytes the stream took,
/// at least one for a non-empty buffer.
template <AsyncWrite S>
using Write = IoFuture<WriteOp<S>>;

/// A future of one write of `bytes` to `stream`: the count written.
template <AsyncWrite S>
Write<S> write(S& stream, std::span<const std::byte> bytes) noexcept {
  return Write<S>(stream, bytes);
}

}  // namespace pollux
