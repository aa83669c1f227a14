// read(stream, buffer): a future of one read: as many bytes as the stream
// has ready, at least one, or 0 at the end of the stream. Cancel-safe:
// destroyed before it is Ready, it has read nothing (the bytes stay in the
// socket) and it takes its waker back from the stream (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <span>

#include "pollux/io/async_io.hpp"
#include "pollux/io/io_future.hpp"

namespace pollux {

/// The operation of read(stream, buffer): one poll_read into the buffer.
template <AsyncRead S>
class ReadOp {
 public:
  using Output = std::size_t;

  /// The operation on `stream`; both must outlive its future.
  ReadOp(S& stream, std::span<std::byte> buffer) noexcept : stream_(&stream), buffer_(buffer) {}

  /// One poll_read.
  Poll<std::size_t> poll(Context& cx) { return stream_->poll_read(cx, buffer_); }
  /// Gives the stream's read waker back.
  void abandon() noexcept { stream_->abandon(Interest::Read); }

 private:
  S* stream_;
  std::span<std::byte> buffer_;
};

/// What read(stream, buffer) returns: a future of one read: as many bytes as the stream has ready,
/// at least one, or 0 at the end of the stream.
template <AsyncRead S>
using Read = IoFuture<ReadOp<S>>;

/// A future of one read from `stream` into `buffer`: the count, 0 at the end.
template <AsyncRead S>
Read<S> read(S& stream, std::span<std::byte> buffer) noexcept {
  return Read<S>(stream, buffer);
}

}  // namespace pollux
