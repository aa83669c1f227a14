// OpenFile: the future of OpenOptions::open. A path the kernel has cached
// opens on the caller's thread; any other through openat on this thread's
// io_uring ring, or open(2) on the blocking pool where there is no ring.
// Destroyed while the kernel opens, it leaks nothing: the descriptor that
// comes too late is closed by the job's state (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>
#include <filesystem>
#include <optional>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/fs/detail/file_job.hpp"
#include "pollux/runtime/spawn_blocking.hpp"

namespace pollux::fs {
class File;  // complete wherever OpenFile is polled: fs/file.hpp includes this header
}  // namespace pollux::fs

namespace pollux::fs::detail {

/// open(2) of `path` with `flags` (O_CLOEXEC added) and `mode`, now, on
/// this thread: the descriptor, or std::system_error naming the path.
int open_descriptor(const std::filesystem::path& path, int flags, unsigned mode);

/// What open_cached() did.
struct CachedOpen {
  /// The descriptor (the caller's to close), or -1.
  int fd = -1;
  /// With fd -1: the errno to report, or 0 when the open must go where it
  /// may wait (the pool or the ring).
  int error = 0;
  /// The file's size, when opened.
  std::uint64_t size = 0;
};

/// openat2(2) of `path` with `flags`, RESOLVE_CACHED and O_NONBLOCK, on this
/// thread: it never waits. Only a regular file is kept (a FIFO or device
/// must not hold an open); its O_NONBLOCK stays only if `flags` asked.
/// O_CREAT and O_TRUNC cannot be done this way (error 0).
CachedOpen open_cached(const std::filesystem::path& path, int flags);

/// A future of `path` opened with `flags` and `mode` (std::system_error
/// naming the path on failure).
class [[nodiscard("futures do nothing unless polled")]] OpenFile {
 public:
  using Output = File;

  /// The open of `path`; nothing happens before the first poll.
  OpenFile(std::filesystem::path path, int flags, unsigned mode) noexcept
      : path_(std::move(path)), flags_(flags), mode_(mode) {}
  OpenFile(OpenFile &&) noexcept = default;
  OpenFile& operator=(OpenFile&&) = delete;

  /// Ready with the open File.
  Poll<File> poll(Context & cx);

 private:
  enum class State { Start, OnRing, OnPool, Done };

  State state_ = State::Start;
  std::filesystem::path path_;
  int flags_;
  unsigned mode_;
  RingJob ring_;
  std::optional<BlockingHandle<int>> pool_;  // open_descriptor's
};

}  // namespace pollux::fs::detail
