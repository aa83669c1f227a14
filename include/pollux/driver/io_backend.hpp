// IoBackend: which kernel interface a driver's sockets run on. epoll tells
// a socket when to make its own system call; io_uring takes the operations
// themselves and returns their results, so many reads and writes cost one
// system call. Chosen when the driver starts: see RuntimeOptions.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

namespace pollux {

/// Which kernel interface a driver's sockets run on.
enum class IoBackend {
  /// io_uring for a driver that one thread runs (a current-thread
  /// runtime) where the kernel allows it; epoll otherwise. The environment
  /// variable POLLUX_IO=epoll|uring overrides it.
  Auto,
  /// epoll: readiness, one system call per read or write.
  Epoll,
  /// io_uring: completions; TCP streams read and write through the ring.
  /// For a driver that one thread runs (a current-thread runtime); others
  /// (a multi-thread runtime) run on epoll, as where the kernel refuses
  /// io_uring, and say so on stderr.
  Uring,
};

/// "auto", "epoll" or "uring".
constexpr const char* to_string(IoBackend backend) noexcept {
  switch (backend) {
    case IoBackend::Epoll:
      return "epoll";
    case IoBackend::Uring:
      return "uring";
    case IoBackend::Auto:
      break;
  }
  return "auto";
}

}  // namespace pollux
