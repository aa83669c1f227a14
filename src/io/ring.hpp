// Ring: an io_uring instance of one thread (a current-thread driver's, or a
// pool worker's), for the sockets that run on completions (TcpStream on
// the io_uring backend). Any thread stages an operation (an SQE) under the
// submission lock; the ring's own thread submits them all and reaps their
// completions in one io_uring_enter when it sleeps or polls.
// Each operation's user_data is a Completion, which the reaping thread calls
// with the result; whoever staged it keeps it alive until then (rule 5: its
// memory is freed only after the kernel is done with it).
//
// Receives take their memory from a ring of provided buffers the Ring owns,
// so an idle socket holds no receive buffer: the kernel picks one only when
// data comes.
#pragma once

#include <liburing.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

#include "pollux/core/detail/concurrency.hpp"

namespace pollux::detail {

// What the reaper calls for one CQE: `result` is the CQE's res (a count, or
// -errno), `flags` its flags (IORING_CQE_F_MORE while a multishot operation
// goes on, IORING_CQE_F_BUFFER with the provided buffer's id).
//
// The rest is the ring's, under its submission lock: an operation staged
// while the submission queue was full, by a thread that may not submit,
// waits in the ring's backlog with its SQE here, and so may a cancellation
// of it, until the ring's thread moves them into the queue. Each
// Completion has at most one operation staged at a time, so this needs no
// memory of its own.
struct Completion {
  void (*complete)(Completion* self, int result, unsigned flags);
  // An io_uring_sqe's bytes (its type ends in a flexible array, which
  // cannot be a member).
  alignas(io_uring_sqe) unsigned char backlog_sqe[sizeof(io_uring_sqe)];
  Completion* backlog_next = nullptr;
  bool op_in_backlog = false;      // backlog_sqe waits to be submitted
  bool cancel_in_backlog = false;  // a cancellation of this operation waits
  // Set by the owner before staging: shut_down() lets the operation finish
  // rather than cancel it (a file write its caller was told is done). Only
  // for operations that end in bounded time.
  bool finish_before_shut_down = false;
};

class Ring {
 public:
  // Provided buffers: how many, and how large each is (a few in a model
  // build, whose checker sets a ring up for every execution).
  static constexpr unsigned kBuffers = kModelBuild ? 8 : 512;
  static constexpr unsigned kBufferSize = 4096;
  static constexpr unsigned kBufferGroup = 0;
  static constexpr std::size_t kBufferBytes = std::size_t{kBuffers} * kBufferSize;

  // Only the creating thread ever enters the ring (SINGLE_ISSUER), which
  // lets the kernel run completions when that thread asks for them
  // (DEFER_TASKRUN) instead of interrupting it. `unpark` makes that thread
  // return from a wait, for a stage from another thread, which it alone
  // may submit. Throws std::system_error when the kernel refuses io_uring
  // (seccomp, io_uring_disabled) or lacks a feature the backend needs.
  Ring(void (*unpark)(void*), void* unpark_context);
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  // The submission queue's size (small in a model build, so that its
  // checker fills it).
  static constexpr unsigned kEntries = kModelBuild ? 4 : 1024;

  // Stages one operation for `completion`: `prep(sqe)` fills the SQE. False
  // when the ring is shut down (nothing was staged). A full submission
  // queue is emptied by the ring's thread when it stages; from any other
  // thread the operation waits in the backlog instead, for the ring's
  // thread's next poll or wait (a busy worker polls its ring every 61
  // tasks). Throws std::system_error only if the kernel refuses a submit.
  template <class Prep>
  bool stage(Completion* completion, Prep&& prep) {
    detail::MutexLock lock(sq_mutex_);
    if (shut_down_.load(std::memory_order_relaxed)) return false;
    io_uring_sqe* sqe = sqe_locked();
    if (sqe == nullptr) sqe = to_backlog_locked(completion);
    prep(sqe);
    io_uring_sqe_set_data(sqe, completion);
    in_flight_.fetch_add(1, std::memory_order_relaxed);
    if (completion->finish_before_shut_down) finishing_.fetch_add(1, std::memory_order_relaxed);
    after_stage_locked();
    return true;
  }
  // Stages the cancellation of `target`'s operation; its own completion is
  // ignored. The target's completion still comes (with -ECANCELED, or its
  // result if it finished first). False when the ring is shut down.
  bool stage_cancel(Completion* target);

  // The operation of `target` completed while the stream that owns it is
  // closing: a cancellation of it that still waits in the backlog is
  // dropped, since `target`'s memory may be freed once this returns. Call
  // it from the completion, under the owner's lock that stage_cancel was
  // called under.
  void withdraw_cancel(Completion* target) noexcept;

  // Driver side, one thread at a time. wait() submits what is staged and
  // blocks until a completion comes or `timeout_ns` passes; poll() submits
  // and reaps without blocking. Both call the completions reaped.
  void wait(std::optional<std::int64_t> timeout_ns);
  void poll();

  // Lets the operations marked finish_before_shut_down finish, then
  // cancels every other, reaps until none is left, and refuses new ones:
  // after it, nothing the kernel does reaches our memory.
  void shut_down() noexcept;
  bool is_shut_down() const noexcept { return shut_down_.load(std::memory_order_acquire); }

  // The provided buffer `id` (from a CQE's flags), and its return to the kernel.
  std::byte* buffer(std::uint16_t id) const noexcept { return buffer_memory_ + std::size_t{id} * kBufferSize; }
  void recycle(std::uint16_t id) noexcept;

  // The completions reaped so far (for the driver's metrics).
  std::uint64_t completions() const noexcept { return completions_.get(); }

  // The operations staged or in the kernel (for tests and shutdown).
  std::size_t in_flight() const noexcept { return in_flight_.load(std::memory_order_relaxed); }

  // Reference count: the driver and every stream on the ring hold one.
  friend void intrusive_ptr_add_ref(Ring* ring) noexcept { ring->refs_.fetch_add(1, std::memory_order_relaxed); }
  friend void intrusive_ptr_release(Ring* ring) noexcept {
    if (ring->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete ring;
  }

 private:
  // A free SQE, after submitting the full queue on the ring's thread; null
  // when the queue is full and this thread may not submit.
  io_uring_sqe* sqe_locked() POLLUX_REQUIRES(sq_mutex_);
  // Links `completion` into the backlog (once) and marks its operation
  // there: the SQE to fill is its backlog_sqe.
  io_uring_sqe* to_backlog_locked(Completion* completion) POLLUX_REQUIRES(sq_mutex_);
  void link_backlog_locked(Completion* completion) POLLUX_REQUIRES(sq_mutex_);
  // The ring's thread: moves the backlog into the submission queue.
  // Returns the operations cancelled before they were submitted, linked
  // through backlog_next, for complete_unsubmitted after the lock.
  Completion* drain_backlog_locked() POLLUX_REQUIRES(sq_mutex_);
  // Completes each of `unsubmitted` with -ECANCELED, as the kernel would.
  void complete_unsubmitted(Completion* unsubmitted) noexcept;
  // Calls `completion` with a CQE's result (its last, unless `more`).
  void deliver(Completion* completion, int result, unsigned flags, bool more);
  void after_stage_locked() POLLUX_REQUIRES(sq_mutex_);
  // Publishes the staged SQEs to the kernel (liburing's __io_uring_flush_sq,
  // which is private): how many the kernel has yet to take.
  unsigned flush_locked() noexcept POLLUX_REQUIRES(sq_mutex_);
  // io_uring_enter that submits `to_submit` and waits for `min_complete`.
  int enter(unsigned to_submit, unsigned min_complete, const std::int64_t* timeout_ns);
  void reap();
  bool owner() const noexcept { return std::this_thread::get_id() == owner_; }

  io_uring ring_{};
  std::thread::id owner_;
  void (*unpark_)(void*);
  void* unpark_context_;
  Atomic<int> refs_{0};
  Atomic<bool> shut_down_{false};
  Atomic<std::size_t> in_flight_{0};
  Atomic<std::size_t> finishing_{0};  // of those, marked finish_before_shut_down
  Atomic<bool> reaping_{false};       // one reaper at a time: the driver's contract, checked
  Counter completions_;               // written by the reaper

  Mutex sq_mutex_;                                     // guards the submission queue's user side and waiting_
  bool waiting_ POLLUX_GUARDED_BY(sq_mutex_) = false;  // a thread is (about to be) blocked in wait()
  Completion* backlog_head_ POLLUX_GUARDED_BY(sq_mutex_) = nullptr;  // oldest first
  Completion* backlog_tail_ POLLUX_GUARDED_BY(sq_mutex_) = nullptr;

  io_uring_buf_ring* buffer_ring_ = nullptr;
  std::byte* buffer_memory_ = nullptr;
  Mutex buffer_mutex_;  // guards the buffer ring's tail
};

}  // namespace pollux::detail
