// A kernel for the io_uring backend's model test. liburing's entry points
// that make system calls (io_uring_queue_init_params, io_uring_enter2,
// io_uring_peek_batch_cqe, the buffer ring's registration, io_uring_queue_exit)
// are defined here instead, over rings in ordinary memory; liburing's inline
// half (get_sqe, the prep_ helpers, cq_advance, the buffer ring's add and
// advance) runs unchanged on them, and so do Ring, UringStream and
// WorkerRing. The test executable does not link liburing.
//
// The kernel acts on real file descriptors (a socketpair, an eventfd), never
// blocking: a receive or a poll whose fd has nothing yet stays in the kernel
// (io_uring's own poll-driven retry), and is tried again at every enter. As
// with IORING_SETUP_DEFER_TASKRUN, completions are posted only inside the
// ring owner's io_uring_enter. An enter that must wait for a completion
// blocks its model thread until one could come: a lost wake-up leaves it
// blocked, which the checker reports as a deadlock.
#pragma once

#include <liburing.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fake_uring {

/// How the kernel completes a send: whole at once; one byte at a time (a
/// peer with little room); or never until it is cancelled (a peer that
/// never reads).
enum class Sends { Whole, ByteAtATime, NotUntilCancelled };

/// One io_uring instance: its rings' memory, what the process has
/// submitted and the kernel has not completed, and its provided buffers.
class Kernel {
 public:
  explicit Kernel(unsigned entries);

  /// How this kernel's sends complete (set before the ring is used).
  Sends sends = Sends::Whole;
  /// False: the provided-buffer ring looks empty, as when every buffer is
  /// queued in streams nobody reads (receives into it fail with ENOBUFS).
  bool lends_buffers = true;

  /// Operations submitted and not complete (a multishot poll stays).
  std::size_t in_kernel() const noexcept { return pending_.size(); }
  /// Whether the ring's owner is blocked in io_uring_enter, waiting for a
  /// completion.
  bool sleeping() const noexcept { return sleeping_; }
  /// Provided buffers the kernel may still pick.
  unsigned buffers_free() const noexcept;
  /// The buffer ring's size, as registered.
  unsigned buffers_registered() const noexcept { return buffer_entries_; }

  // liburing's side of it (fake_uring.cpp).
  void map(io_uring& ring, io_uring_params& params);
  int enter(unsigned to_submit, unsigned min_complete, bool timed);
  unsigned peek(io_uring_cqe** cqes, unsigned count);
  void register_buffers(const io_uring_buf_reg& registration);
  void unregister_buffers() noexcept { buffer_ring_ = nullptr; }
  // Whether a receive into a provided buffer would find none.
  bool no_buffer() const noexcept { return !lends_buffers || buffers_free() == 0; }

 private:
  // An SQE as the kernel copied it at submission.
  struct Op {
    std::uint64_t data;
    std::uint8_t opcode;
    int fd;
    std::uint64_t addr;
    std::uint32_t len;
    std::uint8_t sqe_flags;
    std::uint32_t op_flags;  // the msg flags, poll events or cancel flags
    bool fired = false;      // a multishot poll that posted in this enter
  };

  // Issues `op` as it is submitted: completes it now, or keeps it.
  void issue(Op op);
  // Completes `op` if it can complete now: whether it left the kernel.
  bool attempt(Op& op);
  // Whether `op` could complete if attempted now (a blocked enter's test).
  bool could_complete(const Op& op) const;
  void cancel(const Op& op);
  void post(std::uint64_t data, int result, unsigned flags);

  unsigned sq_head_ = 0, sq_tail_ = 0, sq_flags_ = 0, sq_dropped_ = 0, sq_mask_, sq_entries_;
  unsigned cq_head_ = 0, cq_tail_ = 0, cq_flags_ = 0, cq_overflow_ = 0, cq_mask_, cq_entries_;
  std::vector<unsigned> sq_array_;
  std::vector<io_uring_sqe> sqes_;
  std::vector<io_uring_cqe> cqes_;
  std::vector<Op> pending_;
  io_uring_buf_ring* buffer_ring_ = nullptr;
  unsigned buffer_entries_ = 0;
  std::uint16_t buffer_head_ = 0;  // the next buffer the kernel picks
  bool sleeping_ = false;
};

/// The kernel of the ring set up last (and not yet exited).
Kernel& current();

}  // namespace fake_uring
