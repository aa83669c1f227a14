// The ring's submission, reaping, shutdown and provided buffers.
//
// Submission without a lost operation: a stage from another thread that
// finds the owner waiting in the ring unparks it (no other thread may
// enter a single-issuer ring), and its next wait submits. Both sides decide
// under sq_mutex_, so either the waiter's flush sees the SQE or the stager
// sees waiting_.
//
// A full submission queue never fails a stage: the ring's thread submits
// it to make room, and any other thread (which a single-issuer ring does
// not let in) leaves the operation in the backlog, in its Completion,
// where the ring's thread picks it up. A cancellation of an operation
// still in the backlog never reaches the kernel: the operation is
// completed with -ECANCELED instead, as if the kernel had cancelled it.
#include "ring.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>

#include "../core/metrics.hpp"
#include "pollux/core/detail/concurrency.hpp"

namespace pollux::detail {

namespace {

// The user_data of operations whose completion nobody needs (cancellations).
constexpr std::uint64_t kIgnored = 1;

[[noreturn]] void fail(int error, const char* what) {
  throw std::system_error(error, std::system_category(), std::string("pollux: io_uring: ") + what);
}

}  // namespace

Ring::Ring(void (*unpark)(void*), void* unpark_context)
    : owner_(std::this_thread::get_id()), unpark_(unpark), unpark_context_(unpark_context) {
  io_uring_params params{};
  // The CQ twice the SQ (liburing's default) and overflow to the kernel's
  // list beyond it (IORING_FEAT_NODROP): no completion is ever lost.
  params.flags =
      IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_SUBMIT_ALL;
  int result = io_uring_queue_init_params(kEntries, &ring_, &params);
  if (result < 0) fail(-result, "io_uring_setup");
  auto give_up = [&](int error, const char* what) {
    if (buffer_ring_ != nullptr) munmap(buffer_ring_, kBuffers * sizeof(io_uring_buf));
    if (buffer_memory_ != nullptr) munmap(buffer_memory_, kBufferBytes);
    io_uring_queue_exit(&ring_);
    fail(error, what);
  };
  constexpr unsigned kNeeded = IORING_FEAT_NODROP | IORING_FEAT_EXT_ARG | IORING_FEAT_FAST_POLL;
  if ((params.features & kNeeded) != kNeeded) give_up(ENOSYS, "the kernel lacks NODROP, EXT_ARG or FAST_POLL");

  // The buffer ring: page-aligned memory the kernel maps, one entry per buffer.
  void* ring_memory =
      mmap(nullptr, kBuffers * sizeof(io_uring_buf), PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (ring_memory == MAP_FAILED) give_up(errno, "mmap of the buffer ring");
  buffer_ring_ = static_cast<io_uring_buf_ring*>(ring_memory);
  // The kernel takes the buffers in turn, round the ring, so a server soon
  // touches them all: they are faulted in now (MAP_POPULATE), and a
  // server's memory stays what it was at start however many connections
  // it serves, instead of creeping up to it.
  void* memory = mmap(nullptr, kBufferBytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE | MAP_POPULATE, -1, 0);
  if (memory == MAP_FAILED) give_up(errno, "mmap of the provided buffers");
  buffer_memory_ = static_cast<std::byte*>(memory);
  io_uring_buf_ring_init(buffer_ring_);
  io_uring_buf_reg registration{};
  registration.ring_addr = reinterpret_cast<std::uint64_t>(buffer_ring_);
  registration.ring_entries = kBuffers;
  registration.bgid = kBufferGroup;
  result = io_uring_register_buf_ring(&ring_, &registration, 0);
  if (result < 0) give_up(-result, "io_uring_register_buf_ring");
  int mask = io_uring_buf_ring_mask(kBuffers);
  for (unsigned id = 0; id < kBuffers; ++id) {
    io_uring_buf_ring_add(buffer_ring_, buffer(static_cast<std::uint16_t>(id)), kBufferSize,
                          static_cast<unsigned short>(id), mask, static_cast<int>(id));
  }
  io_uring_buf_ring_advance(buffer_ring_, static_cast<int>(kBuffers));
}

Ring::~Ring() {
  shut_down();
  io_uring_unregister_buf_ring(&ring_, kBufferGroup);
  io_uring_queue_exit(&ring_);
  munmap(buffer_ring_, kBuffers * sizeof(io_uring_buf));
  munmap(buffer_memory_, kBufferBytes);
}

io_uring_sqe* Ring::sqe_locked() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe != nullptr) return sqe;
  // Full: a thousand operations staged since the last park. Submit them
  // now if this thread may enter the ring.
  if (!owner()) return nullptr;
  unsigned staged = flush_locked();
  int result = enter(staged, 0, nullptr);
  if (result < 0) fail(-result, "io_uring_enter (submitting a full queue)");
  sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) fail(EBUSY, "submission queue full");
  return sqe;
}

void Ring::after_stage_locked() {
  if (waiting_) unpark_(unpark_context_);  // else the next wait or poll submits it
}

void Ring::link_backlog_locked(Completion* completion) {
  if (completion->op_in_backlog || completion->cancel_in_backlog) return;  // linked already
  completion->backlog_next = nullptr;
  if (backlog_tail_ != nullptr) {
    backlog_tail_->backlog_next = completion;
  } else {
    backlog_head_ = completion;
  }
  backlog_tail_ = completion;
}

io_uring_sqe* Ring::to_backlog_locked(Completion* completion) {
  link_backlog_locked(completion);
  completion->op_in_backlog = true;
  std::memset(completion->backlog_sqe, 0, sizeof completion->backlog_sqe);
  return reinterpret_cast<io_uring_sqe*>(completion->backlog_sqe);
}

bool Ring::stage_cancel(Completion* target) {
  detail::MutexLock lock(sq_mutex_);
  if (shut_down_.load(std::memory_order_relaxed)) return false;
  if (target->op_in_backlog) {
    // Never submitted: the drain completes it with -ECANCELED.
    target->cancel_in_backlog = true;
    after_stage_locked();
    return true;
  }
  io_uring_sqe* sqe = sqe_locked();
  if (sqe == nullptr) {
    link_backlog_locked(target);
    target->cancel_in_backlog = true;
    in_flight_.fetch_add(1, std::memory_order_relaxed);  // the cancellation's own completion, once submitted
    after_stage_locked();
    return true;
  }
  io_uring_prep_cancel(sqe, target, 0);
  io_uring_sqe_set_data64(sqe, kIgnored);
  in_flight_.fetch_add(1, std::memory_order_relaxed);
  after_stage_locked();
  return true;
}

void Ring::withdraw_cancel(Completion* target) noexcept {
  detail::MutexLock lock(sq_mutex_);
  if (!target->cancel_in_backlog) return;
  target->cancel_in_backlog = false;
  in_flight_.fetch_sub(1, std::memory_order_relaxed);  // the cancellation is never submitted
  // Unlinked by a walk: only a close that found the queue full gets here.
  Completion* previous = nullptr;
  for (Completion* at = backlog_head_; at != nullptr; previous = at, at = at->backlog_next) {
    if (at != target) continue;
    (previous != nullptr ? previous->backlog_next : backlog_head_) = at->backlog_next;
    if (backlog_tail_ == at) backlog_tail_ = previous;
    return;
  }
}

Completion* Ring::drain_backlog_locked() {
  Completion* unsubmitted = nullptr;
  while (backlog_head_ != nullptr) {
    Completion* completion = backlog_head_;
    if (completion->op_in_backlog && completion->cancel_in_backlog) {
      completion->op_in_backlog = completion->cancel_in_backlog = false;
      backlog_head_ = completion->backlog_next;
      completion->backlog_next = unsubmitted;
      unsubmitted = completion;
      continue;
    }
    io_uring_sqe* sqe = sqe_locked();  // the ring's thread: never null
    if (completion->op_in_backlog) {
      std::memcpy(static_cast<void*>(sqe), completion->backlog_sqe, sizeof completion->backlog_sqe);
      completion->op_in_backlog = false;
    } else {
      io_uring_prep_cancel(sqe, completion, 0);
      io_uring_sqe_set_data64(sqe, kIgnored);
      completion->cancel_in_backlog = false;
    }
    backlog_head_ = completion->backlog_next;
  }
  backlog_tail_ = nullptr;
  return unsubmitted;
}

void Ring::complete_unsubmitted(Completion* unsubmitted) noexcept {
  while (unsubmitted != nullptr) {
    Completion* completion = std::exchange(unsubmitted, unsubmitted->backlog_next);
    in_flight_.fetch_sub(1, std::memory_order_relaxed);
    deliver(completion, -ECANCELED, 0, false);
  }
}

void Ring::deliver(Completion* completion, int result, unsigned flags, bool more) {
  // Read before the call, which may free the completion or stage again.
  if (!more && completion->finish_before_shut_down) finishing_.fetch_sub(1, std::memory_order_relaxed);
  completion->complete(completion, result, flags);
}

unsigned Ring::flush_locked() noexcept {
  io_uring_sq& sq = ring_.sq;
  unsigned tail = sq.sqe_tail;
  if (sq.sqe_head != tail) {
    sq.sqe_head = tail;
    io_uring_smp_store_release(sq.ktail, tail);
  }
  return tail - io_uring_smp_load_acquire(sq.khead);
}

int Ring::enter(unsigned to_submit, unsigned min_complete, const std::int64_t* timeout_ns) {
  // GETEVENTS even without waiting: it runs a single-issuer ring's deferred
  // completions and flushes the kernel's overflow list into the CQ.
  unsigned flags = IORING_ENTER_GETEVENTS;
  __kernel_timespec ts{};
  io_uring_getevents_arg arg{};
  void* argp = nullptr;
  std::size_t argsz = 0;
  if (timeout_ns != nullptr) {
    ts.tv_sec = *timeout_ns / 1'000'000'000;
    ts.tv_nsec = *timeout_ns % 1'000'000'000;
    arg.ts = reinterpret_cast<std::uint64_t>(&ts);
    argp = &arg;
    argsz = sizeof arg;
    flags |= IORING_ENTER_EXT_ARG;
  }
  // Through liburing's entry point, not a raw system call: every call into
  // the kernel goes through liburing, which the model test replaces with a
  // kernel of its own (tests/model/fake_uring.cpp).
  for (;;) {
    int result = io_uring_enter2(ring_.ring_fd, to_submit, min_complete, flags, static_cast<sigset_t*>(argp), argsz);
    if (result != -EINTR || min_complete != 0) return result;
  }
}

void Ring::wait(std::optional<std::int64_t> timeout_ns) {
  unsigned staged;
  Completion* unsubmitted;
  {
    detail::MutexLock lock(sq_mutex_);
    unsubmitted = drain_backlog_locked();
    staged = flush_locked();
    waiting_ = unsubmitted == nullptr;
  }
  if (unsubmitted != nullptr) {
    // Their completions may wake tasks: submit and reap, but do not sleep.
    complete_unsubmitted(unsubmitted);
    timeout_ns = 0;
  }
  // Completions already reaped-ready need no sleep.
  unsigned min_complete = io_uring_cq_ready(&ring_) > 0 ? 0 : 1;
  if (timeout_ns && *timeout_ns == 0) min_complete = 0;
  int result = enter(staged, min_complete, timeout_ns && *timeout_ns > 0 ? &*timeout_ns : nullptr);
  {
    detail::MutexLock lock(sq_mutex_);
    waiting_ = false;
  }
  // ETIME: the timeout passed; EINTR: a signal; EBUSY/EAGAIN: the CQ is
  // full and completions must be reaped first. All mean: reap, return.
  if (result < 0 && result != -ETIME && result != -EINTR && result != -EBUSY && result != -EAGAIN) {
    fail(-result, "io_uring_enter (waiting)");
  }
  reap();
}

void Ring::poll() {
  unsigned staged;
  Completion* unsubmitted;
  {
    detail::MutexLock lock(sq_mutex_);
    unsubmitted = drain_backlog_locked();
    staged = flush_locked();
  }
  complete_unsubmitted(unsubmitted);
  // A single-issuer ring posts completions only when its thread asks
  // (DEFER_TASKRUN); IORING_SQ_TASKRUN says there are some to post.
  bool deferred = (IO_URING_READ_ONCE(*ring_.sq.kflags) & IORING_SQ_TASKRUN) != 0;
  if (staged > 0 || deferred || IO_URING_READ_ONCE(*ring_.sq.kflags) & IORING_SQ_CQ_OVERFLOW) {
    int result = enter(staged, 0, nullptr);
    if (result < 0 && result != -EBUSY && result != -EAGAIN && result != -EINTR) {
      fail(-result, "io_uring_enter (polling)");
    }
  }
  reap();
}

void Ring::reap() {
  if (reaping_.exchange(true, std::memory_order_acquire)) return;  // another thread reaps now
  struct Done {
    Atomic<bool>& reaping;
    ~Done() { reaping.store(false, std::memory_order_release); }
  } done{reaping_};
  // In batches: a completion may stage more, and completions it causes
  // come in the next batch.
  for (;;) {
    io_uring_cqe* cqes[64];
    unsigned n = io_uring_peek_batch_cqe(&ring_, cqes, 64);
    if (n == 0) break;
    // Copied out and the CQ slots given back first: a completion may stage
    // more operations, whose completions then have room.
    struct Entry {
      std::uint64_t data;
      int result;
      unsigned flags;
    } entries[64];
    for (unsigned i = 0; i < n; ++i) entries[i] = Entry{cqes[i]->user_data, cqes[i]->res, cqes[i]->flags};
    io_uring_cq_advance(&ring_, n);
    count(completions_, n);
    for (unsigned i = 0; i < n; ++i) {
      bool more = (entries[i].flags & IORING_CQE_F_MORE) != 0;
      if (!more) in_flight_.fetch_sub(1, std::memory_order_relaxed);
      if (entries[i].data == kIgnored || entries[i].data == 0) continue;
      deliver(reinterpret_cast<Completion*>(entries[i].data), entries[i].result, entries[i].flags, more);
    }
  }
}

void Ring::shut_down() noexcept {
  // What must finish does, first: its completions may stage the rest of
  // a short write, so new operations are still taken meanwhile.
  if (owner()) {
    try {
      while (finishing_.load(std::memory_order_relaxed) > 0) wait(std::nullopt);
    } catch (...) {  // the kernel refused the ring: the cancellation below ends them
    }
  }
  {
    detail::MutexLock lock(sq_mutex_);
    if (shut_down_.exchange(true, std::memory_order_acq_rel)) return;
  }
  // Only the owner of a single-issuer ring may enter it; anywhere else the
  // kernel cancels what is left when the ring's fd closes.
  if (!owner()) return;
  io_uring_sqe* sqe;
  Completion* unsubmitted = nullptr;
  {
    detail::MutexLock lock(sq_mutex_);
    // The backlog never reached the kernel: its operations end here, and
    // its cancellations are not needed (everything is cancelled below).
    while (backlog_head_ != nullptr) {
      Completion* completion = std::exchange(backlog_head_, backlog_head_->backlog_next);
      bool op = completion->op_in_backlog;
      if (completion->cancel_in_backlog && !op) in_flight_.fetch_sub(1, std::memory_order_relaxed);
      completion->op_in_backlog = completion->cancel_in_backlog = false;
      if (op) {
        completion->backlog_next = unsubmitted;
        unsubmitted = completion;
      }
    }
    backlog_tail_ = nullptr;
    try {
      sqe = sqe_locked();  // submits a full queue to make room (this is the ring's thread)
    } catch (...) {
      sqe = nullptr;  // the kernel refused the submit: the ring's fd closing cancels what is left
    }
    if (sqe != nullptr) {
      io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
      io_uring_sqe_set_data64(sqe, kIgnored);
      in_flight_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  complete_unsubmitted(unsubmitted);
  // Every operation of a socket completes promptly once cancelled.
  try {
    while (in_flight_.load(std::memory_order_relaxed) > 0) {
      unsigned staged;
      {
        detail::MutexLock lock(sq_mutex_);
        staged = flush_locked();
      }
      int result = enter(staged, 1, nullptr);
      if (result < 0 && result != -EINTR && result != -EBUSY && result != -EAGAIN && result != -ETIME) break;
      reap();
    }
  } catch (...) {
    // A completion threw (it does not): what is left is the kernel's to cancel.
  }
}

void Ring::recycle(std::uint16_t id) noexcept {
  detail::MutexLock lock(buffer_mutex_);
  io_uring_buf_ring_add(buffer_ring_, buffer(id), kBufferSize, id, io_uring_buf_ring_mask(kBuffers), 0);
  io_uring_buf_ring_advance(buffer_ring_, 1);
}

}  // namespace pollux::detail
