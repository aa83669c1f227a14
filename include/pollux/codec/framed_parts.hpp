// FramedParts<Io, Codec>: what a Framed is made of, taken apart so that a
// protocol can change codec (or wrap the socket) mid-stream: the bytes
// already read and not yet decoded travel with the parts, so none is lost
// when a STARTTLS or a WebSocket handshake switches what reads them.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>

#include "pollux/io/bytes_buf.hpp"

namespace pollux {

/// The pieces of a Framed: its reader-and-writer, its codec, the bytes read
/// and not yet decoded, and the bytes encoded and not yet written. A Framed
/// made from them decodes `read_buffer` before it reads again.
template <class Io, class Codec>
struct FramedParts {
  /// The socket (or whatever the Framed read and wrote).
  Io io;
  /// The codec.
  Codec codec;
  /// Bytes read from `io` and not yet decoded: the next codec's first input.
  BytesBuf read_buffer;
  /// Bytes encoded and not yet written to `io`.
  BytesBuf write_buffer;
  /// The most bytes a sink buffers before poll_ready flushes first.
  std::size_t backpressure_boundary = 8192;
};

}  // namespace pollux
