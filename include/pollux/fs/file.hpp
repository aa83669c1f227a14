// fs::File: an open file as an AsyncRead and AsyncWrite (so read, write_all,
// copy, BufReader and the codecs work on it), with positional reads and
// writes, set_len, sync and metadata as futures.
// How it stays off the worker thread: a read first tries preadv2 with
// RWF_NOWAIT, which the kernel answers from the page cache or refuses, so a
// cached read costs one system call on the caller's thread. Anything that
// could block goes, on the io_uring backend, to the ring of the thread
// that polls it (read, write, fsync, statx), else to the blocking pool
// (ftruncate always). What the kernel reads or writes is the File's own
// buffer, never the caller's, so a future destroyed meanwhile leaves no
// kernel write into freed memory (rule 5: it takes its waker back, and the
// File waits for that operation before its next one).
//
// Cancellation, per operation:
//  - poll_read (read, read_exact, ...): destroyed while the kernel reads,
//    the bytes it read are kept and given to the next read; nothing is lost.
//  - poll_write: the bytes are copied and the write is Ready at once; the
//    ring or the pool writes them behind the caller (at most 2 MiB at a
//    time), and a failure of that write is thrown by the next operation,
//    flush included. flush()/sync_all() wait for it. A runtime shutting
//    down lets such a write to a regular file finish before it goes.
//  - read_at, write_at, set_len, sync_all, sync_data, metadata: destroyed
//    while the kernel runs it, the operation still completes and its
//    result is dropped; the next operation waits for it first.
//  - Destroying the File does not wait: an operation in flight finishes,
//    and the descriptor is closed after it.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <tuple>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/fs/detail/file_job.hpp"
#include "pollux/fs/metadata.hpp"
#include "pollux/io/interest.hpp"
#include "pollux/io/io_future.hpp"
#include "pollux/runtime/spawn_blocking.hpp"

namespace pollux::fs {

/// An open file. Made by File::open, File::create, OpenOptions::open or
/// File::from_fd. Not for two threads at once (as a TcpStream).
class File {
 public:
  template <class T, class... Args>
  class Op;

  /// The largest piece a single read or write job moves (2 MiB, as tokio's pool).
  static constexpr std::size_t kMaxChunk = std::size_t{2} << 20;

  /// A future of `path` opened for reading (defined with OpenOptions).
  static auto open(std::filesystem::path path);
  /// A future of `path` opened for writing, created or cut to length 0.
  static auto create(std::filesystem::path path);
  /// Takes ownership of an open descriptor (blocking or not: the File
  /// never waits on it in the caller's thread).
  static File from_fd(int fd);
  /// open(2) with O_CLOEXEC, now, on this thread (it may block): what OpenOptions::open runs on the pool.
  static File open_now(const std::filesystem::path& path, int flags, unsigned mode);
  /// openat2(2) with RESOLVE_CACHED: the File if every path component was
  /// in the kernel's cache (never waits), else nullopt; other errors thrown
  /// as open_now throws them.
  static std::optional<File> try_open_cached(const std::filesystem::path& path, int flags);

  File(File&& other) noexcept;
  File& operator=(File&&) = delete;
  ~File();

  /// The descriptor; this File still owns it.
  int native_handle() const noexcept { return fd_->fd; }

  /// AsyncRead: up to buffer.size() bytes from the file position; 0 at the end.
  Poll<std::size_t> poll_read(Context& cx, std::span<std::byte> buffer);
  /// AsyncWrite: copies up to kMaxChunk bytes and is Ready with their count;
  /// the ring or the pool writes them behind the caller (see the header's note).
  Poll<std::size_t> poll_write(Context& cx, std::span<const std::byte> data);
  /// Ready once every write so far reached the kernel (its error thrown).
  Poll<void> poll_flush(Context& cx);
  /// The same as poll_flush: a file has no direction to close.
  Poll<void> poll_shutdown(Context& cx) { return poll_flush(cx); }
  /// A future that polled this File went away: the job's wake-up is not for it.
  void abandon(Interest interest) noexcept;

  /// Up to buffer.size() bytes at `offset` (the file position is unchanged).
  Poll<std::size_t> poll_read_at(Context& cx, std::span<std::byte> buffer, std::uint64_t offset);
  /// Up to kMaxChunk bytes of `data` written at `offset`, Ready once done.
  Poll<std::size_t> poll_write_at(Context& cx, std::span<const std::byte> data, std::uint64_t offset);
  /// fsync(2) (data_only: fdatasync(2)), after the writes in flight.
  Poll<void> poll_sync(Context& cx, bool data_only);
  /// ftruncate(2) to `length`.
  Poll<void> poll_set_len(Context& cx, std::uint64_t length);
  /// fstat(2).
  Poll<Metadata> poll_metadata(Context& cx);
  /// Moves the file position to `position` (bytes from the start); Ready
  /// with it. Bytes read ahead are dropped.
  Poll<std::uint64_t> poll_seek(Context& cx, std::uint64_t position);

  /// A future of a read of up to buffer.size() bytes at `offset`; the buffer must outlive it.
  auto read_at(std::span<std::byte> buffer, std::uint64_t offset);
  /// A future of a write of up to kMaxChunk bytes of `data` at `offset`; the data must outlive it.
  auto write_at(std::span<const std::byte> data, std::uint64_t offset);
  /// A future of fsync(2): data and metadata on the device.
  auto sync_all();
  /// A future of fdatasync(2): the data on the device.
  auto sync_data();
  /// A future of ftruncate(2) to `length`.
  auto set_len(std::uint64_t length);
  /// A future of the file's Metadata.
  auto metadata();
  /// A future that moves the file position to `position`.
  auto seek(std::uint64_t position);

 private:
  explicit File(int fd);

  /// The job in flight, what it was asked, and its outcome once it came.
  struct Job {
    detail::FileJob kind = detail::FileJob::None;
    std::uint64_t offset = 0;
    std::size_t length = 0;
    bool operator==(const Job&) const = default;
  };

  // Waits for the job in flight. Ready with its outcome when it was `want`
  // (the same kind, offset and length: the operation polled again), else
  // settles it (read-ahead kept, a write's error kept) and Ready(nullopt).
  Poll<std::optional<detail::FileOutcome>> poll_settle(Context& cx, Job want);
  // Starts `want` on the ring or the pool with the File's buffer; `data` is copied in first (writes).
  void launch(Job want, std::span<const std::byte> data = {});
  void throw_kept_error(const char* what);
  // Waits for the job in flight, then runs `want` (sync, set_len,
  // metadata) as a job: Ready with its outcome (T: void or Metadata).
  template <class T>
  Poll<T> poll_job(Context& cx, Job want, const char* what);
  // preadv2/pwritev2 with RWF_NOWAIT at `offset` (-1: the file position):
  // the count, or nullopt where the kernel would wait (or never serves
  // this file at once: then no later call asks again). Other errors are
  // thrown, naming `what`.
  std::optional<std::size_t> try_read_nowait(std::span<std::byte> buffer, off_t offset, const char* what);
  std::optional<std::size_t> try_write_nowait(std::span<const std::byte> data, off_t offset, const char* what);

  Arc<detail::FileDescriptor> fd_;
  std::optional<BlockingHandle<detail::FileOutcome>> job_;  // a job on the pool, or
  detail::RingJob ring_job_;                                // one on the ring (busy())
  Job job_asked_;
  detail::FileBuffer buffer_;  // what the next job reads into or writes from
  detail::FileBuffer ahead_;   // a finished read's bytes: [begin, end) are the next read's
  std::size_t ahead_begin_ = 0;
  std::size_t ahead_end_ = 0;
  int kept_errno_ = 0;  // a write behind the caller failed: the next operation throws it
  bool nowait_read_ = true;
  bool nowait_write_ = true;
};

/// One operation of a File: its poll function and arguments, for IoFuture.
template <class T, class... Args>
class File::Op {
 public:
  using Output = std::conditional_t<std::is_void_v<T>, Unit, T>;
  /// The File member that polls the operation.
  using Fn = Poll<T> (File::*)(Context&, Args...);

  /// The call file->*fn(cx, args...).
  Op(File* file, Fn fn, Args... args) noexcept : file_(file), fn_(fn), args_(args...) {}

  /// One call of the operation's poll function.
  Poll<Output> poll(Context& cx) {
    if constexpr (std::is_void_v<T>) {
      Poll<void> done = std::apply([&](Args... args) { return (file_->*fn_)(cx, args...); }, args_);
      if (!done.is_ready()) return pending;
      return Poll<Output>(std::in_place);
    } else {
      return std::apply([&](Args... args) { return (file_->*fn_)(cx, args...); }, args_);
    }
  }
  /// Gives the File's waker back.
  void abandon() noexcept { file_->abandon(Interest::Read); }

 private:
  File* file_;
  Fn fn_;
  std::tuple<Args...> args_;
};

inline auto File::read_at(std::span<std::byte> buffer, std::uint64_t offset) {
  return IoFuture<Op<std::size_t, std::span<std::byte>, std::uint64_t>>(this, &File::poll_read_at, buffer, offset);
}
inline auto File::write_at(std::span<const std::byte> data, std::uint64_t offset) {
  return IoFuture<Op<std::size_t, std::span<const std::byte>, std::uint64_t>>(this, &File::poll_write_at, data, offset);
}
inline auto File::sync_all() { return IoFuture<Op<void, bool>>(this, &File::poll_sync, false); }
inline auto File::sync_data() { return IoFuture<Op<void, bool>>(this, &File::poll_sync, true); }
inline auto File::set_len(std::uint64_t length) {
  return IoFuture<Op<void, std::uint64_t>>(this, &File::poll_set_len, length);
}
inline auto File::metadata() { return IoFuture<Op<Metadata>>(this, &File::poll_metadata); }
inline auto File::seek(std::uint64_t position) {
  return IoFuture<Op<std::uint64_t, std::uint64_t>>(this, &File::poll_seek, position);
}

}  // namespace pollux::fs

#include "pollux/fs/open_options.hpp"  // File::open and File::create
