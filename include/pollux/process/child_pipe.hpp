// ChildStdin and ChildOutput: the parent's ends of a child's piped stdin,
// stdout and stderr, as AsyncWrite and AsyncRead over the reactor (either
// I/O backend), so write_all, read_to_end, BufReader, copy and the codecs
// work on them. Cancel-safe as a socket is: a read or write future
// destroyed before Ready moved no byte and takes its waker back (rule 5).
// A write to a child that closed its stdin is EPIPE, never SIGPIPE: the
// signal is blocked around the write and a pending one taken back.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <span>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/io/detail/io_source.hpp"
#include "pollux/io/interest.hpp"

namespace pollux::process {

/// The write end of a child's stdin. Destroy it (or shutdown()) to close the
/// pipe, so that the child reads its end of input.
class ChildStdin {
 public:
  /// Takes ownership of the pipe's write end (made non-blocking).
  explicit ChildStdin(int fd);

  /// AsyncWrite: some of `data` into the pipe (EPIPE thrown once the child closed it).
  Poll<std::size_t> poll_write(Context& cx, std::span<const std::byte> data);
  /// A pipe holds nothing back: Ready at once.
  Poll<void> poll_flush(Context&) { return ready(); }
  /// Closes the pipe: the child reads the end of its input.
  Poll<void> poll_shutdown(Context&) {
    source_.close();
    return ready();
  }
  /// A write future going away takes its waker back.
  void abandon(Interest interest) noexcept { source_.abandon(interest); }
  /// The descriptor (-1 once shut down).
  int native_handle() const noexcept { return source_.fd(); }

 private:
  pollux::detail::IoSource source_;
};

/// The read end of a child's stdout or stderr.
class ChildOutput {
 public:
  /// Takes ownership of the pipe's read end (made non-blocking).
  explicit ChildOutput(int fd);

  /// AsyncRead: what the child wrote, or 0 once it closed its end (it exited).
  Poll<std::size_t> poll_read(Context& cx, std::span<std::byte> buffer);
  /// A read future going away takes its waker back.
  void abandon(Interest interest) noexcept { source_.abandon(interest); }
  /// The descriptor.
  int native_handle() const noexcept { return source_.fd(); }

 private:
  pollux::detail::IoSource source_;
};

/// The read end of a child's stdout.
using ChildStdout = ChildOutput;
/// The read end of a child's stderr.
using ChildStderr = ChildOutput;

}  // namespace pollux::process
