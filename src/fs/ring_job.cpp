// RingJob: a File's job as io_uring operations on the ring of the thread
// that starts it.
//
// The state's references: the RingJob handle holds one, and the kernel one
// while an operation is in flight, so what the kernel writes (the buffer,
// the statx record, the path) lives until its completion is reaped, even
// when the File went away meanwhile (rule 5).

#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cerrno>
#include <string>
#include <utility>

#include "../io/ring.hpp"
#include "pollux/core/atomic_waker.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/fs/detail/file_job.hpp"
#include "pollux/io/detail/io_context.hpp"

namespace pollux::fs::detail {

using pollux::detail::Atomic;
using pollux::detail::Completion;
using pollux::detail::Ring;

struct RingJobState : Completion {
  // Handle side: written before an operation is staged, read after its
  // outcome is seen (the completion's release store of `finished` orders
  // the kernel's writes and ours).
  Arc<Ring> ring;
  Arc<FileDescriptor> fd;
  FileJob kind = FileJob::None;
  std::uint64_t offset = 0;
  std::size_t length = 0;
  std::size_t done = 0;  // a write's bytes the kernel took so far
  FileBuffer buffer;
  std::string path;  // an open's
  int open_flags = 0;
  unsigned open_mode = 0;
  struct ::statx stx {};
  int regular = -1;  // whether fd is a regular file: -1 until a write asks
  int append = -1;   // whether fd is O_APPEND: -1 until a Read or Write asks
  // Read and Write (at the file position): the position they start at,
  // given to the kernel as an offset and set after the job. The kernel's
  // own "-1: the file position" loses its update after a short write
  // (seen on Linux 6.18), so it is used only where there is no position
  // (a pipe) or the kernel picks it (O_APPEND).
  std::int64_t position = -1;
  ssize_t result = 0;

  Atomic<bool> finished{false};
  AtomicWaker waker;
  Atomic<int> refs{1};

  RingJobState() noexcept { complete = &on_complete; }
  RingJobState(const RingJobState&) = delete;
  RingJobState& operator=(const RingJobState&) = delete;
  // The last reference goes: an open whose outcome nobody took (its
  // future was destroyed while the kernel opened) closes what it opened.
  ~RingJobState() {
    if (kind == FileJob::Open && finished.load(std::memory_order_relaxed) && result >= 0)
      ::close(static_cast<int>(result));
  }

  void release() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // Stages the operation (a write: the part not taken yet). The kernel's
  // reference is taken by the caller.
  bool stage() {
    return ring->stage(this, [this](io_uring_sqe* sqe) {
      const int file = fd ? fd->fd : -1;
      switch (kind) {
        case FileJob::Read:
          io_uring_prep_read(sqe, file, buffer.data.get(), static_cast<unsigned>(length),
                             static_cast<__u64>(position));  // -1: the file position
          break;
        case FileJob::ReadAt:
          io_uring_prep_read(sqe, file, buffer.data.get(), static_cast<unsigned>(length), offset);
          break;
        case FileJob::Write:
          io_uring_prep_write(sqe, file, buffer.data.get() + done, static_cast<unsigned>(length - done),
                              position < 0 ? static_cast<__u64>(-1) : static_cast<__u64>(position) + done);
          break;
        case FileJob::WriteAt:
          io_uring_prep_write(sqe, file, buffer.data.get() + done, static_cast<unsigned>(length - done), offset + done);
          break;
        case FileJob::SyncAll:
        case FileJob::SyncData:
          io_uring_prep_fsync(sqe, file, kind == FileJob::SyncData ? IORING_FSYNC_DATASYNC : 0);
          break;
        case FileJob::Metadata:
          io_uring_prep_statx(sqe, file, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx);
          break;
        case FileJob::Open:
          io_uring_prep_openat(sqe, AT_FDCWD, path.c_str(), open_flags | O_CLOEXEC, open_mode);
          break;
        case FileJob::SetLen:
        case FileJob::None:
          break;  // never staged: start() refuses them
      }
    });
  }

  // The rest of a short write, from the completion: a ring that refuses it
  // ends the write with what the kernel took.
  bool stage_rest() noexcept {
    try {
      return stage();
    } catch (...) {
      return false;
    }
  }

  // On the ring's thread, for each completion.
  static void on_complete(Completion* self, int res, unsigned) {
    auto* state = static_cast<RingJobState*>(self);
    bool writing = state->kind == FileJob::Write || state->kind == FileJob::WriteAt;
    if (writing) {
      if (res > 0) {
        state->done += static_cast<std::size_t>(res);
        // A short write (a signal, a full quota soon to fail) goes on from
        // where the kernel stopped; the kernel's reference stays.
        if (state->done < state->length && state->stage_rest()) return;
      }
      // As the pool's write: a write at an offset gives its count (the
      // next one meets the error), a write behind the caller its error.
      bool count_wins = state->done > 0 && (res >= 0 || state->kind == FileJob::WriteAt);
      state->result = count_wins ? static_cast<ssize_t>(state->done) : res;  // 0: the device took nothing
    } else {
      state->result = res;
    }
    state->finished.store(true, std::memory_order_release);
    state->waker.wake_by_ref();
    state->release();
  }
};

RingJob::RingJob(RingJob&& other) noexcept
    : state_(std::exchange(other.state_, nullptr)), busy_(std::exchange(other.busy_, false)) {}

RingJob::~RingJob() {
  if (state_ == nullptr) return;
  (void)state_->waker.take();  // the completion may still come: it must wake nobody
  state_->release();
}

bool RingJob::available() noexcept {
  Ring* ring = pollux::detail::io_context().ring;
  return ring != nullptr && !ring->is_shut_down();
}

namespace {
// The state for the next job, made at a File's first job on a ring.
RingJobState* fresh_state(RingJobState*& state) {
  if (state == nullptr) state = new RingJobState();
  return state;
}

bool launch(RingJobState& state) {
  state.finished.store(false, std::memory_order_relaxed);  // no completion is owed: the last outcome was taken
  state.done = 0;
  state.refs.fetch_add(1, std::memory_order_relaxed);  // the kernel's
  bool staged = false;
  try {
    staged = state.stage();
  } catch (...) {  // the kernel refused a submit: nothing was staged
    state.refs.fetch_sub(1, std::memory_order_relaxed);
    state.ring.reset();
    throw;
  }
  if (staged) return true;
  state.refs.fetch_sub(1, std::memory_order_relaxed);  // the handle still holds one
  state.ring.reset();
  return false;
}
}  // namespace

bool RingJob::start(const Arc<FileDescriptor>& fd, FileJob kind, std::uint64_t offset, std::size_t length,
                    FileBuffer& buffer) {
  if (kind == FileJob::SetLen || kind == FileJob::None || kind == FileJob::Open || !available()) return false;
  RingJobState& state = *fresh_state(state_);
  state.ring = Arc<Ring>(pollux::detail::io_context().ring);
  state.fd = fd;
  state.kind = kind;
  state.offset = offset;
  state.length = length;
  state.buffer = std::move(buffer);
  if (kind == FileJob::Read || kind == FileJob::ReadAt) state.buffer.reserve(length);
  // A write to a regular file, or a sync, ends in bounded time and was
  // promised (a write behind the caller): a runtime shutting down lets it
  // finish. A read, or a write to a pipe that may never drain, is cancelled.
  bool writes = kind == FileJob::Write || kind == FileJob::WriteAt;
  if (writes && state.regular < 0) {
    struct ::stat st {};
    state.regular = ::fstat(fd->fd, &st) == 0 && S_ISREG(st.st_mode) ? 1 : 0;
  }
  state.finish_before_shut_down =
      (writes && state.regular == 1) || kind == FileJob::SyncAll || kind == FileJob::SyncData;
  state.position = -1;
  if (kind == FileJob::Read || kind == FileJob::Write) {
    if (state.append < 0) state.append = (::fcntl(fd->fd, F_GETFL) & O_APPEND) != 0 ? 1 : 0;
    if (state.append == 0) state.position = ::lseek(fd->fd, 0, SEEK_CUR);  // -1 (ESPIPE): a pipe
  }
  if (!launch(state)) {
    buffer = std::move(state.buffer);
    state.fd.reset();
    return false;
  }
  busy_ = true;
  return true;
}

bool RingJob::start_open(const std::filesystem::path& path, int flags, unsigned mode) {
  if (!available()) return false;
  RingJobState& state = *fresh_state(state_);
  state.ring = Arc<Ring>(pollux::detail::io_context().ring);
  state.kind = FileJob::Open;
  state.finish_before_shut_down = false;  // a FIFO's open may wait for ever: cancelled
  state.path = path.native();
  state.open_flags = flags;
  state.open_mode = mode;
  if (!launch(state)) return false;
  busy_ = true;
  return true;
}

Poll<FileOutcome> RingJob::poll(Context& cx) {
  RingJobState& state = *state_;
  if (!state.finished.load(std::memory_order_acquire)) {
    state.waker.register_waker(cx.waker());
    if (!state.finished.load(std::memory_order_acquire)) return pending;
  }
  busy_ = false;
  FileOutcome outcome;
  outcome.result = state.result;
  outcome.buffer = std::move(state.buffer);
  if (state.kind == FileJob::Metadata && state.result == 0) outcome.metadata = Metadata::from_statx(state.stx);
  if (state.position >= 0 && state.result > 0) (void)::lseek(state.fd->fd, state.position + state.result, SEEK_SET);
  state.kind = FileJob::None;  // taken: an open's descriptor is the caller's now
  state.fd.reset();
  state.ring.reset();
  return Poll<FileOutcome>(std::in_place, std::move(outcome));
}

void RingJob::forget_waker() noexcept {
  if (state_ != nullptr) (void)state_->waker.take();
}

}  // namespace pollux::fs::detail
