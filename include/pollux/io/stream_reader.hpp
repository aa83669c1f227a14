// StreamReader<S>: a Stream of byte chunks read as a byte stream, tokio-util's
// StreamReader: an AsyncRead and AsyncBufRead, so read_exact, read_until,
// lines, copy and the codecs work on what a channel or a decoder produced.
// Its chunks are kept one at a time: a read takes what it has room for and
// the rest waits for the next read, so no byte is lost to a short buffer.
// The stream below keeps the waker of its last poll (rule 2) until it is
// polled again or destroyed, as every stream does; abandon has nothing
// more to take back.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/result.hpp"
#include "pollux/io/bytes_buf.hpp"
#include "pollux/io/interest.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {

namespace detail {

template <class T>
struct StreamChunk : std::false_type {};
template <>
struct StreamChunk<BytesBuf> : std::true_type {};
template <>
struct StreamChunk<std::string> : std::true_type {};
template <>
struct StreamChunk<std::vector<std::byte>> : std::true_type {};
template <>
struct StreamChunk<std::vector<char>> : std::true_type {};

template <class T>
struct StreamChunkItem : StreamChunk<T> {
  using Chunk = T;
};
template <class T>
struct StreamChunkItem<Result<T, std::error_code>> : StreamChunk<T> {
  using Chunk = T;
};

inline std::span<const std::byte> chunk_bytes(const BytesBuf& chunk) noexcept { return chunk.bytes(); }
template <class C>
std::span<const std::byte> chunk_bytes(const C& chunk) noexcept {
  return std::as_bytes(std::span(chunk.data(), chunk.size()));
}

}  // namespace detail

/// What StreamReader reads: a stream of byte chunks (BytesBuf, std::string,
/// std::vector of bytes or chars), or of `Result<chunk, std::error_code>`,
/// whose error a read throws as std::system_error.
template <class S>
concept ChunkStream = Stream<S> && detail::StreamChunkItem<item_t<S>>::value;

/// A byte stream over a Stream of chunks: AsyncRead and AsyncBufRead.
template <ChunkStream S>
class StreamReader {
 public:
  /// Reads the chunks of `stream`, in order; its end is the end of the bytes.
  explicit StreamReader(S stream) : stream_(std::move(stream)) {}

  /// AsyncBufRead: the rest of the current chunk, polling the stream for the
  /// next when it is used up (empty chunks are skipped); an empty span at
  /// the end. A chunk that is an error is thrown as std::system_error.
  Poll<std::span<const std::byte>> poll_fill_buf(Context& cx) {
    while (!chunk_ || offset_ == detail::chunk_bytes(*chunk_).size()) {
      if (ended_) return ready(std::span<const std::byte>());
      Poll<std::optional<item_t<S>>> next = stream_.poll_next(cx);
      if (next.is_pending()) return pending;
      if (!next.value()) {
        ended_ = true;
        chunk_.reset();
        return ready(std::span<const std::byte>());
      }
      chunk_.emplace(unwrap(std::move(*next.value())));
      offset_ = 0;
    }
    return ready(detail::chunk_bytes(*chunk_).subspan(offset_));
  }
  /// AsyncBufRead: marks `n` bytes of what poll_fill_buf gave as used.
  void consume(std::size_t n) noexcept { offset_ += n; }

  /// AsyncRead: copies what the current chunk has (at most the buffer), so
  /// the rest of a long chunk waits for the next read.
  Poll<std::size_t> poll_read(Context& cx, std::span<std::byte> buffer) {
    if (buffer.empty()) return ready(std::size_t{0});
    Poll<std::span<const std::byte>> filled = poll_fill_buf(cx);
    if (filled.is_pending()) return pending;
    std::size_t n = std::min(buffer.size(), filled.value().size());
    if (n != 0) std::memcpy(buffer.data(), filled.value().data(), n);
    consume(n);
    return ready(n);
  }
  /// AsyncRead: nothing to take back (see the header's note).
  void abandon(Interest) noexcept {}

  /// The stream below.
  const S& get_ref() const noexcept { return stream_; }
  /// The stream below, to change it; reading it directly skips this reader's chunk.
  S& get_mut() noexcept { return stream_; }
  /// Gives up the reader: the stream, and the rest of the current chunk (if any).
  std::pair<S, BytesBuf> into_parts() && {
    BytesBuf rest;
    if (chunk_) rest.append(detail::chunk_bytes(*chunk_).subspan(offset_));
    return {std::move(stream_), std::move(rest)};
  }

 private:
  using Chunk = typename detail::StreamChunkItem<item_t<S>>::Chunk;

  static Chunk unwrap(item_t<S>&& item) {
    if constexpr (std::is_same_v<item_t<S>, Chunk>) {
      return std::move(item);
    } else {
      if (!item) throw std::system_error(item.error(), "pollux::StreamReader: the stream gave an error");
      return std::move(item).value();
    }
  }

  S stream_;
  std::optional<Chunk> chunk_;
  std::size_t offset_ = 0;
  bool ended_ = false;
};

}  // namespace pollux
