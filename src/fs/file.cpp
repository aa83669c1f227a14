// fs::File: the inline page-cache read, the pool jobs and their settling.

#include "pollux/fs/file.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/try_ready.hpp"
#include "pollux/fs/open_options.hpp"

namespace pollux::fs {

namespace detail {

// close(2) stays on the caller's thread, never the ring: a local file's
// close does not wait on the device, and a close deferred to the ring
// would keep the descriptor (and its fcntl locks) past the File's end.
FileDescriptor::~FileDescriptor() { ::close(fd); }

void FileBuffer::reserve(std::size_t size) {
  if (capacity >= size) return;
  data = std::make_unique_for_overwrite<std::byte[]>(size);
  capacity = size;
}

namespace {

// Writes all of [data, data + length) at `offset` (-1: the file position,
// a write behind the caller, whose error matters more than its count).
ssize_t write_fully(int fd, const std::byte* data, std::size_t length, off_t offset) {
  std::size_t done = 0;
  while (done < length) {
    ssize_t n = offset < 0 ? ::write(fd, data + done, length - done)
                           : ::pwrite(fd, data + done, length - done, offset + static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return done > 0 && offset >= 0 ? static_cast<ssize_t>(done) : -errno;
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

ssize_t read_once(int fd, std::byte* into, std::size_t length, off_t offset) {
  for (;;) {
    ssize_t n = offset < 0 ? ::read(fd, into, length) : ::pread(fd, into, length, offset);
    if (n >= 0) return n;
    if (errno != EINTR) return -errno;
  }
}

// The body of every pool job: runs on a pool thread with the File's buffer.
FileOutcome run_job(int fd, FileJob kind, std::uint64_t offset, std::size_t length, FileBuffer buffer) {
  FileOutcome out;
  switch (kind) {
    case FileJob::Read:
    case FileJob::ReadAt:
      buffer.reserve(length);
      out.result = read_once(fd, buffer.data.get(), length, kind == FileJob::Read ? -1 : static_cast<off_t>(offset));
      break;
    case FileJob::Write:
    case FileJob::WriteAt:
      out.result = write_fully(fd, buffer.data.get(), length, kind == FileJob::Write ? -1 : static_cast<off_t>(offset));
      break;
    case FileJob::SyncAll:
    case FileJob::SyncData:
      out.result = (kind == FileJob::SyncAll ? ::fsync(fd) : ::fdatasync(fd)) == 0 ? 0 : -errno;
      break;
    case FileJob::SetLen:
      out.result = ::ftruncate(fd, static_cast<off_t>(offset)) == 0 ? 0 : -errno;
      break;
    case FileJob::Metadata: {
      struct ::stat st {};
      out.result = ::fstat(fd, &st) == 0 ? 0 : -errno;
      if (out.result == 0) out.metadata = Metadata::from_stat(st);
      break;
    }
    case FileJob::None:
    case FileJob::Open:  // OpenOptions::open's, never a File's
      break;
  }
  out.buffer = std::move(buffer);
  return out;
}

[[noreturn]] void throw_errno(int error, const char* what) {
  throw std::system_error(error, std::generic_category(), what);
}

}  // namespace
}  // namespace detail

using detail::FileJob;

int OpenOptions::flags() const {
  int access = 0;
  bool writes = write_ || append_;
  if (read_ && writes) {
    access = O_RDWR;
  } else if (read_) {
    access = O_RDONLY;
  } else if (writes) {
    access = O_WRONLY;
  } else {
    throw std::invalid_argument("pollux::fs::OpenOptions: neither read, write nor append is set");
  }
  if ((truncate_ || create_ || create_new_) && !writes) {
    throw std::invalid_argument("pollux::fs::OpenOptions: truncate, create and create_new need write or append");
  }
  if (truncate_ && append_) throw std::invalid_argument("pollux::fs::OpenOptions: truncate and append together");
  int flags = access | O_CLOEXEC;
  if (append_) flags |= O_APPEND;
  if (truncate_) flags |= O_TRUNC;
  if (create_new_) {
    flags |= O_CREAT | O_EXCL;
  } else if (create_) {
    flags |= O_CREAT;
  }
  return flags;
}

namespace detail {

int open_descriptor(const std::filesystem::path& path, int flags, unsigned mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int error = errno;
    throw std::system_error(error, std::generic_category(), "pollux::fs::File::open(" + path.string() + ")");
  }
  return fd;
}

}  // namespace detail

File File::open_now(const std::filesystem::path& path, int flags, unsigned mode) {
  return File(detail::open_descriptor(path, flags, mode));
}

namespace detail {

CachedOpen open_cached(const std::filesystem::path& path, int flags) {
  if ((flags & (O_CREAT | O_TRUNC)) != 0) return {};  // RESOLVE_CACHED refuses them
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC | O_NONBLOCK);
  how.resolve = RESOLVE_CACHED;
  int fd = static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how));
  if (fd < 0) {
    // EAGAIN: not all cached; ENXIO: a FIFO's write end with no reader.
    if (errno == EAGAIN || errno == ENOSYS || errno == EINVAL || errno == EINTR || errno == ENXIO) return {};
    return {-1, errno, 0};
  }
  struct ::stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)
      || ((flags & O_NONBLOCK) == 0 && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)) {
    ::close(fd);
    return {};
  }
  return {fd, 0, static_cast<std::uint64_t>(st.st_size)};
}

}  // namespace detail

std::optional<File> File::try_open_cached(const std::filesystem::path& path, int flags) {
  detail::CachedOpen opened = detail::open_cached(path, flags);
  if (opened.fd >= 0) return File(opened.fd);
  if (opened.error == 0) return std::nullopt;
  throw std::system_error(opened.error, std::generic_category(), "pollux::fs::File::open(" + path.string() + ")");
}

File File::from_fd(int fd) {
  if (fd < 0) throw std::invalid_argument("pollux::fs::File::from_fd: a negative descriptor");
  return File(fd);
}

namespace detail {

Poll<File> OpenFile::poll(Context& cx) {
  for (;;) {
    switch (state_) {
      case State::Start:
        if (auto file = File::try_open_cached(path_, flags_)) {
          state_ = State::Done;
          return Poll<File>(std::in_place, std::move(*file));
        }
        if (ring_.start_open(path_, flags_, mode_)) {
          state_ = State::OnRing;
        } else {
          pool_.emplace(spawn_blocking(
              [path = path_, flags = flags_, mode = mode_] { return open_descriptor(path, flags, mode); }));
          state_ = State::OnPool;
        }
        break;
      case State::OnRing: {
        POLLUX_TRY_READY_ASSIGN(auto outcome, ring_.poll(cx));
        state_ = State::Done;
        if (outcome.result < 0) {
          throw std::system_error(static_cast<int>(-outcome.result), std::generic_category(),
                                  "pollux::fs::File::open(" + path_.string() + ")");
        }
        return Poll<File>(std::in_place, File::from_fd(static_cast<int>(outcome.result)));
      }
      case State::OnPool: {
        POLLUX_TRY_READY_ASSIGN(auto result, pool_->poll(cx));
        state_ = State::Done;
        pool_.reset();
        if (!result)
          throw std::system_error(ECANCELED, std::generic_category(),
                                  "pollux::fs::OpenOptions::open: the runtime shut down first");
        return Poll<File>(std::in_place, File::from_fd(result.value()));
      }
      case State::Done:
        POLLUX_CHECK_NOT_DONE(OpenFile, false);
        return pending;
    }
  }
}

}  // namespace detail

File::File(int fd) : fd_(make_arc<detail::FileDescriptor>(fd)) {}

File::File(File&& other) noexcept
    : fd_(std::move(other.fd_)),
      job_(std::move(other.job_)),
      ring_job_(std::move(other.ring_job_)),
      job_asked_(other.job_asked_),
      buffer_(std::move(other.buffer_)),
      ahead_(std::move(other.ahead_)),
      ahead_begin_(other.ahead_begin_),
      ahead_end_(other.ahead_end_),
      kept_errno_(other.kept_errno_),
      nowait_read_(other.nowait_read_),
      nowait_write_(other.nowait_write_) {
  other.job_.reset();
}

File::~File() = default;  // a job in flight holds the descriptor and buffer it needs

void File::abandon(Interest) noexcept {
  if (job_) job_->forget_waker();
  ring_job_.forget_waker();
}

void File::launch(Job want, std::span<const std::byte> data) {
  if (!data.empty()) {
    buffer_.reserve(data.size());
    std::memcpy(buffer_.data.get(), data.data(), data.size());
  }
  if (ring_job_.start(fd_, want.kind, want.offset, want.length, buffer_)) {
    job_asked_ = want;
    return;
  }
  job_.emplace(spawn_blocking([fd = fd_, want, buffer = std::move(buffer_)]() mutable {
    return detail::run_job(fd->fd, want.kind, want.offset, want.length, std::move(buffer));
  }));
  job_asked_ = want;
}

Poll<std::optional<detail::FileOutcome>> File::poll_settle(Context& cx, Job want) {
  std::optional<detail::FileOutcome> done;
  if (ring_job_.busy()) {
    POLLUX_TRY_READY_ASSIGN(auto outcome, ring_job_.poll(cx));
    done.emplace(std::move(outcome));
  } else if (job_) {
    POLLUX_TRY_READY_ASSIGN(auto result, job_->poll(cx));
    job_.reset();
    if (result) done.emplace(std::move(result).value());
  } else {
    return Poll<std::optional<detail::FileOutcome>>(std::in_place);
  }
  Job asked = std::exchange(job_asked_, Job{});
  if (!done) {  // the pool shut down before the job ran: nothing happened
    if (asked.kind == FileJob::Write) kept_errno_ = ECANCELED;
    return Poll<std::optional<detail::FileOutcome>>(std::in_place);
  }
  detail::FileOutcome outcome = std::move(done).value();
  if (asked.kind == FileJob::Read) {    // read ahead: the next read's bytes, whoever asked
    std::swap(ahead_, outcome.buffer);  // a read starts only once the read-ahead is used up
    buffer_ = std::move(outcome.buffer);
    ahead_begin_ = 0;
    ahead_end_ = outcome.result > 0 ? static_cast<std::size_t>(outcome.result) : 0;
    if (want.kind == FileJob::Read) return Poll<std::optional<detail::FileOutcome>>(std::in_place, std::move(outcome));
    return Poll<std::optional<detail::FileOutcome>>(std::in_place);
  }
  if (asked.kind == FileJob::Write) {  // behind the caller: only its error matters, to the next operation
    if (outcome.result < 0) {
      kept_errno_ = static_cast<int>(-outcome.result);
    } else if (static_cast<std::size_t>(outcome.result) < asked.length) {
      kept_errno_ = ENOSPC;  // the device took fewer bytes than were promised as written
    }
    buffer_ = std::move(outcome.buffer);
    return Poll<std::optional<detail::FileOutcome>>(std::in_place);
  }
  if (asked == want) return Poll<std::optional<detail::FileOutcome>>(std::in_place, std::move(outcome));
  buffer_ = std::move(outcome.buffer);  // an abandoned operation's result: dropped
  return Poll<std::optional<detail::FileOutcome>>(std::in_place);
}

void File::throw_kept_error(const char* what) {
  if (kept_errno_ == 0) return;
  int error = std::exchange(kept_errno_, 0);
  throw std::system_error(error, std::generic_category(), what);
}

std::optional<std::size_t> File::try_read_nowait(std::span<std::byte> buffer, off_t offset, const char* what) {
  if (!nowait_read_) return std::nullopt;
  iovec iov{buffer.data(), buffer.size()};
  ssize_t n = ::preadv2(fd_->fd, &iov, 1, offset, RWF_NOWAIT);
  if (n >= 0) return static_cast<std::size_t>(n);
  if (errno == EOPNOTSUPP || errno == EINVAL) {
    nowait_read_ = false;  // a pipe, a device, an old file system: never served at once
  } else if (errno != EAGAIN && errno != EINTR) {
    detail::throw_errno(errno, what);
  }
  return std::nullopt;
}

std::optional<std::size_t> File::try_write_nowait(std::span<const std::byte> data, off_t offset, const char* what) {
  if (!nowait_write_) return std::nullopt;
  iovec iov{const_cast<std::byte*>(data.data()), data.size()};
  ssize_t n = ::pwritev2(fd_->fd, &iov, 1, offset, RWF_NOWAIT);
  if (n > 0) return static_cast<std::size_t>(n);
  if (n < 0 && (errno == EOPNOTSUPP || errno == EINVAL)) {
    nowait_write_ = false;  // most file systems (ext4, tmpfs): buffered writes may not say EAGAIN
  } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
    detail::throw_errno(errno, what);
  }
  return std::nullopt;
}

Poll<std::size_t> File::poll_read(Context& cx, std::span<std::byte> buffer) {
  constexpr const char* kWhat = "pollux::fs::File::read";
  for (;;) {
    POLLUX_TRY_READY_ASSIGN(auto done, poll_settle(cx, {FileJob::Read, 0, 0}));
    throw_kept_error("pollux::fs::File: an earlier write failed");
    if (done && done->result < 0) detail::throw_errno(static_cast<int>(-done->result), kWhat);
    if (done && done->result == 0) return ready(std::size_t{0});  // the end of the file
    if (buffer.empty()) return ready(std::size_t{0});
    if (ahead_end_ > ahead_begin_) {
      std::size_t n = std::min(buffer.size(), ahead_end_ - ahead_begin_);
      std::memcpy(buffer.data(), ahead_.data.get() + ahead_begin_, n);
      ahead_begin_ += n;
      return ready(n);
    }
    if (auto n = try_read_nowait(buffer, -1, kWhat)) return ready(*n);
    launch({FileJob::Read, 0, std::min(buffer.size(), kMaxChunk)});
    // Polled once more: the job's handle stores the waker (or it is done already).
  }
}

Poll<std::size_t> File::poll_write(Context& cx, std::span<const std::byte> data) {
  POLLUX_TRY_READY(poll_settle(cx, {FileJob::Write, 0, 0}));
  throw_kept_error("pollux::fs::File: an earlier write failed");
  if (data.empty()) return ready(std::size_t{0});
  if (ahead_end_ > ahead_begin_) {  // bytes read ahead: the file position is really theirs
    if (::lseek(fd_->fd, -static_cast<off_t>(ahead_end_ - ahead_begin_), SEEK_CUR) < 0) {
      detail::throw_errno(errno, "pollux::fs::File::write");
    }
    ahead_begin_ = ahead_end_ = 0;
  }
  if (auto n = try_write_nowait(data, -1, "pollux::fs::File::write")) return ready(*n);
  std::size_t n = std::min(data.size(), kMaxChunk);
  launch({FileJob::Write, 0, n}, data.first(n));
  return ready(n);
}

Poll<void> File::poll_flush(Context& cx) {
  POLLUX_TRY_READY(poll_settle(cx, {FileJob::None, 0, 0}));
  throw_kept_error("pollux::fs::File::flush: a write failed");
  return ready();
}

Poll<std::size_t> File::poll_read_at(Context& cx, std::span<std::byte> buffer, std::uint64_t offset) {
  constexpr const char* kWhat = "pollux::fs::File::read_at";
  Job want{FileJob::ReadAt, offset, std::min(buffer.size(), kMaxChunk)};
  for (;;) {
    POLLUX_TRY_READY_ASSIGN(auto done, poll_settle(cx, want));
    throw_kept_error("pollux::fs::File: an earlier write failed");
    if (done) {
      if (done->result < 0) detail::throw_errno(static_cast<int>(-done->result), kWhat);
      std::size_t n = static_cast<std::size_t>(done->result);
      std::memcpy(buffer.data(), done->buffer.data.get(), n);
      buffer_ = std::move(done->buffer);
      return ready(n);
    }
    if (buffer.empty()) return ready(std::size_t{0});
    if (auto n = try_read_nowait(buffer, static_cast<off_t>(offset), kWhat)) return ready(*n);
    launch(want);
  }
}

Poll<std::size_t> File::poll_write_at(Context& cx, std::span<const std::byte> data, std::uint64_t offset) {
  constexpr const char* kWhat = "pollux::fs::File::write_at";
  Job want{FileJob::WriteAt, offset, std::min(data.size(), kMaxChunk)};
  for (;;) {
    POLLUX_TRY_READY_ASSIGN(auto done, poll_settle(cx, want));
    throw_kept_error("pollux::fs::File: an earlier write failed");
    if (done) {
      buffer_ = std::move(done->buffer);
      if (done->result < 0) detail::throw_errno(static_cast<int>(-done->result), kWhat);
      return ready(static_cast<std::size_t>(done->result));
    }
    if (data.empty()) return ready(std::size_t{0});
    if (auto n = try_write_nowait(data, static_cast<off_t>(offset), kWhat)) return ready(*n);
    launch(want, data.first(want.length));
  }
}

template <class T>
Poll<T> File::poll_job(Context& cx, Job want, const char* what) {
  for (;;) {
    POLLUX_TRY_READY_ASSIGN(auto done, poll_settle(cx, want));
    throw_kept_error("pollux::fs::File: an earlier write failed");
    if (done) {
      buffer_ = std::move(done->buffer);
      if (done->result < 0) detail::throw_errno(static_cast<int>(-done->result), what);
      if constexpr (std::is_void_v<T>) {
        return ready();
      } else {
        return Poll<T>(std::in_place, done->metadata);
      }
    }
    launch(want);
  }
}

Poll<void> File::poll_sync(Context& cx, bool data_only) {
  return data_only ? poll_job<void>(cx, {FileJob::SyncData, 0, 0}, "pollux::fs::File::sync_data")
                   : poll_job<void>(cx, {FileJob::SyncAll, 0, 0}, "pollux::fs::File::sync_all");
}

Poll<void> File::poll_set_len(Context& cx, std::uint64_t length) {
  return poll_job<void>(cx, {FileJob::SetLen, length, 0}, "pollux::fs::File::set_len");
}

Poll<Metadata> File::poll_metadata(Context& cx) {
  return poll_job<Metadata>(cx, {FileJob::Metadata, 0, 0}, "pollux::fs::File::metadata");
}

Poll<std::uint64_t> File::poll_seek(Context& cx, std::uint64_t position) {
  POLLUX_TRY_READY(poll_settle(cx, {FileJob::None, 0, 0}));
  throw_kept_error("pollux::fs::File: an earlier write failed");
  ahead_begin_ = ahead_end_ = 0;  // lseek(2) never waits on the device: done here
  off_t at = ::lseek(fd_->fd, static_cast<off_t>(position), SEEK_SET);
  if (at < 0) detail::throw_errno(errno, "pollux::fs::File::seek");
  return ready(static_cast<std::uint64_t>(at));
}

}  // namespace pollux::fs
