// FrameError: why a framed connection stopped: a frame longer than its
// codec allows, bytes that are not a frame, or the I/O below failing (the
// socket reset, the stream ending half way through a frame). Framed turns
// each into the last item of its stream, so one connection's bad input
// ends that connection and nothing else.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <string>
#include <system_error>
#include <utility>

#include "pollux/time/elapsed.hpp"

namespace pollux {

/// The error of LinesCodec, LengthDelimitedCodec and BytesCodec, and a
/// ready-made one for codecs of your own.
class FrameError {
 public:
  /// What went wrong.
  enum class Kind {
    TooLong,    // a frame longer than the codec's maximum
    Malformed,  // bytes that are no frame of this codec
    Io,         // reading or writing failed; io() says how
  };

  /// An I/O failure; what Framed makes of an exception of the socket.
  FrameError(std::error_code io) noexcept : kind_(Kind::Io), io_(io) {}  // NOLINT: implicit by design
  /// A timeout that ran out (a line under timeout(d)): an I/O error of
  /// std::errc::timed_out, as a passed read or write deadline is, so that
  /// a `Result<Result<T, FrameError>, Elapsed>` flattens into one Result.
  FrameError(Elapsed) noexcept : FrameError(std::make_error_code(std::errc::timed_out)) {}  // NOLINT: implicit

  /// True for a deadline or timeout that ran out.
  bool is_timed_out() const noexcept { return kind_ == Kind::Io && io_ == std::errc::timed_out; }
  /// A frame longer than the codec allows; `what` says which limit.
  static FrameError too_long(std::string what) { return FrameError(Kind::TooLong, std::move(what)); }
  /// Bytes that are no frame; `what` says what was wrong with them.
  static FrameError malformed(std::string what) { return FrameError(Kind::Malformed, std::move(what)); }

  /// What went wrong.
  Kind kind() const noexcept { return kind_; }
  /// The I/O error, for Kind::Io; empty otherwise.
  std::error_code io() const noexcept { return io_; }
  /// A message for logs and for the peer.
  std::string message() const { return kind_ == Kind::Io ? io_.message() : what_; }

 private:
  FrameError(Kind kind, std::string what) : kind_(kind), what_(std::move(what)) {}

  Kind kind_;
  std::error_code io_;
  std::string what_;
};

}  // namespace pollux
