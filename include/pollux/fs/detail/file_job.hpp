// What a File's operation needs while it runs away from the caller: the
// descriptor and buffer it shares, its outcome, and RingJob, the operation
// as one io_uring operation on the ring of the thread that starts it.
// Rule 5 holds the same way on the pool and on the ring: the memory the
// kernel writes is the job's own, kept until the kernel is done with it.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/fs/metadata.hpp"

namespace pollux::fs::detail {

/// An open descriptor shared by a File and the job working on it, so that
/// it is closed only after both let go (never under a running read). On a
/// thread with an io_uring ring, the close goes through the ring too.
class FileDescriptor : public RefCounted<FileDescriptor> {
 public:
  explicit FileDescriptor(int fd) noexcept : fd(fd) {}
  ~FileDescriptor();
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  const int fd;
};

/// The File's buffer for the jobs' reads and writes; it moves into a job
/// and comes back with the job's outcome.
struct FileBuffer {
  std::unique_ptr<std::byte[]> data;
  std::size_t capacity = 0;
  /// Makes room for `size` bytes (keeping none of the old ones).
  void reserve(std::size_t size);
};

/// What a job did: a byte count, an offset, a descriptor (Open) or 0
/// (result >= 0), or -errno.
struct FileOutcome {
  ssize_t result = 0;
  FileBuffer buffer;
  Metadata metadata;
};

/// The kinds of job a File runs, one at a time, and the open that makes one.
enum class FileJob : std::uint8_t { None, Read, ReadAt, Write, WriteAt, SyncAll, SyncData, SetLen, Metadata, Open };

struct RingJobState;

/// One job at a time on the io_uring ring of the thread that starts it:
/// read and write (the whole length, short writes resubmitted), fsync,
/// statx and openat. The state is kept from one job to the next, so a File
/// allocates it once. Destroyed while the kernel works, it lets go of the
/// waker and the state lives on until the completion comes.
class RingJob {
 public:
  RingJob() noexcept = default;
  RingJob(RingJob&& other) noexcept;
  RingJob& operator=(RingJob&&) = delete;
  ~RingJob();

  /// Whether this thread has a ring that takes file operations (the
  /// io_uring backend, inside its runtime).
  static bool available() noexcept;

  /// Starts `kind` on `fd` with `buffer`, which moves into the job when it
  /// starts: the bytes to write, or the room to read into. False, with
  /// nothing moved, when this thread has no ring, its ring shut down, or
  /// the ring cannot run `kind` (SetLen).
  bool start(const Arc<FileDescriptor>& fd, FileJob kind, std::uint64_t offset, std::size_t length, FileBuffer& buffer);
  /// Starts openat(2) of `path` with `flags` (O_CLOEXEC added) and `mode`;
  /// false as start() is.
  bool start_open(const std::filesystem::path& path, int flags, unsigned mode);

  /// Whether a job started and its outcome was not taken yet.
  bool busy() const noexcept { return busy_; }
  /// Ready with the outcome of the job started last (-ECANCELED when its
  /// ring shut down first). Only while busy().
  Poll<FileOutcome> poll(Context& cx);
  /// Lets go of the waker the last Pending stored (rule 5).
  void forget_waker() noexcept;

 private:
  RingJobState* state_ = nullptr;
  bool busy_ = false;
};

}  // namespace pollux::fs::detail
