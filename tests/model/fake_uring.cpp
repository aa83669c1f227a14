// The fake kernel's operations (receive, send, poll, cancel), its blocking
// enter, and liburing's system-call entry points that lead to it.
#include "fake_uring.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>

#include "model.hpp"

namespace fake_uring {

namespace {

// The rings alive, by their fd: not a real fd (only this file reads it).
// A ring lives from its setup to io_uring_queue_exit, which may come after
// the next execution's ring was set up (the checker drops an execution's
// state once the next one is built).
std::map<int, std::unique_ptr<Kernel>> kernels;
int next_fd = 1000;

Kernel& kernel_of(int ring_fd) { return *kernels.at(ring_fd); }

// The kernel's own work on a socket: not a scheduling point (it is part of
// the enter that does it), so not the interposed send below.
ssize_t kernel_recv(int fd, void* into, std::size_t length) {
  return syscall(SYS_recvfrom, fd, into, length, MSG_DONTWAIT, nullptr, nullptr);
}
ssize_t kernel_send(int fd, const void* from, std::size_t length, unsigned flags) {
  return syscall(SYS_sendto, fd, from, length, MSG_DONTWAIT | flags, nullptr, 0);
}

// What poll(2) reports for `fd` now, of `events` (and errors, hang-ups).
unsigned ready_events(int fd, unsigned events) {
  pollfd entry{fd, static_cast<short>(events), 0};
  if (::poll(&entry, 1, 0) <= 0) return 0;
  return static_cast<unsigned>(entry.revents);
}

}  // namespace

Kernel& current() { return *std::prev(kernels.end())->second; }

Kernel::Kernel(unsigned entries)
    : sq_mask_(entries - 1),
      sq_entries_(entries),
      cq_mask_(2 * entries - 1),
      cq_entries_(2 * entries),
      sq_array_(entries),
      sqes_(entries),
      cqes_(2 * entries) {
  for (unsigned i = 0; i < entries; ++i) sq_array_[i] = i;
}

void Kernel::map(io_uring& ring, io_uring_params& params) {
  std::memset(&ring, 0, sizeof ring);
  ring.sq.khead = &sq_head_;
  ring.sq.ktail = &sq_tail_;
  ring.sq.kring_mask = &sq_mask_;
  ring.sq.kring_entries = &sq_entries_;
  ring.sq.kflags = &sq_flags_;
  ring.sq.kdropped = &sq_dropped_;
  ring.sq.array = sq_array_.data();
  ring.sq.sqes = sqes_.data();
  ring.sq.ring_mask = sq_mask_;
  ring.sq.ring_entries = sq_entries_;
  ring.cq.khead = &cq_head_;
  ring.cq.ktail = &cq_tail_;
  ring.cq.kring_mask = &cq_mask_;
  ring.cq.kring_entries = &cq_entries_;
  ring.cq.kflags = &cq_flags_;
  ring.cq.koverflow = &cq_overflow_;
  ring.cq.cqes = cqes_.data();
  ring.cq.ring_mask = cq_mask_;
  ring.cq.ring_entries = cq_entries_;
  ring.flags = params.flags;
  params.sq_entries = sq_entries_;
  params.cq_entries = cq_entries_;
  params.features = IORING_FEAT_NODROP | IORING_FEAT_EXT_ARG | IORING_FEAT_FAST_POLL;
  ring.features = params.features;
}

unsigned Kernel::buffers_free() const noexcept {
  if (buffer_ring_ == nullptr) return 0;
  return static_cast<std::uint16_t>(buffer_ring_->tail - buffer_head_);
}

void Kernel::register_buffers(const io_uring_buf_reg& registration) {
  buffer_ring_ = reinterpret_cast<io_uring_buf_ring*>(registration.ring_addr);
  buffer_entries_ = registration.ring_entries;
  buffer_head_ = 0;
}

void Kernel::post(std::uint64_t data, int result, unsigned flags) {
  // The CQ is twice the SQ and the backend keeps far fewer operations: a
  // full CQ here is a leak of operations, not an overflow to model.
  model::check(cq_tail_ - cq_head_ < cq_entries_, "the completion queue overflowed");
  io_uring_cqe& cqe = cqes_[cq_tail_ & cq_mask_];
  cqe.user_data = data;
  cqe.res = result;
  cqe.flags = flags;
  ++cq_tail_;
}

int Kernel::enter(unsigned to_submit, unsigned min_complete, bool timed) {
  unsigned submitted = 0;
  while (submitted < to_submit && sq_head_ != sq_tail_) {
    const io_uring_sqe& sqe = sqes_[sq_head_ & sq_mask_];
    issue(Op{sqe.user_data, sqe.opcode, sqe.fd, sqe.addr, sqe.len, sqe.flags, sqe.msg_flags});
    ++sq_head_;
    ++submitted;
  }
  for (Op& op : pending_) op.fired = false;
  for (;;) {
    // The deferred work: what came since the operations were issued.
    std::erase_if(pending_, [this](Op& op) { return attempt(op); });
    if (cq_tail_ - cq_head_ >= min_complete) return static_cast<int>(submitted);
    // A timed wait can always time out first; only an untimed one blocks.
    if (timed) return -ETIME;
    sleeping_ = true;
    model::block_until([this] {
      return std::any_of(pending_.begin(), pending_.end(), [this](const Op& op) { return could_complete(op); });
    });
    sleeping_ = false;
  }
}

unsigned Kernel::peek(io_uring_cqe** cqes, unsigned count) {
  unsigned ready = std::min(count, cq_tail_ - cq_head_);
  for (unsigned i = 0; i < ready; ++i) cqes[i] = &cqes_[(cq_head_ + i) & cq_mask_];
  return ready;
}

void Kernel::issue(Op op) {
  if (op.opcode == IORING_OP_ASYNC_CANCEL) {
    cancel(op);
    return;
  }
  // A receive into a provided buffer picks one at its first attempt, data or
  // not, and fails at once when there is none.
  if (op.opcode == IORING_OP_RECV && (op.sqe_flags & IOSQE_BUFFER_SELECT) && no_buffer()) {
    post(op.data, -ENOBUFS, 0);
    return;
  }
  if (!attempt(op)) pending_.push_back(op);
}

bool Kernel::could_complete(const Op& op) const {
  switch (op.opcode) {
    case IORING_OP_RECV:
      return ready_events(op.fd, POLLIN) != 0;
    case IORING_OP_POLL_ADD:
      return !op.fired && ready_events(op.fd, op.op_flags) != 0;
    case IORING_OP_SEND:
      return sends != Sends::NotUntilCancelled && ready_events(op.fd, POLLOUT) != 0;
    default:
      return false;
  }
}

bool Kernel::attempt(Op& op) {
  if (!could_complete(op)) return false;
  switch (op.opcode) {
    case IORING_OP_RECV: {
      if (op.sqe_flags & IOSQE_BUFFER_SELECT) {
        if (no_buffer()) {
          post(op.data, -ENOBUFS, 0);
          return true;
        }
        const io_uring_buf& buffer = buffer_ring_->bufs[buffer_head_ & (buffer_entries_ - 1)];
        ++buffer_head_;
        ssize_t got = kernel_recv(op.fd, reinterpret_cast<void*>(buffer.addr), buffer.len);
        unsigned flags = IORING_CQE_F_BUFFER | (unsigned{buffer.bid} << IORING_CQE_BUFFER_SHIFT);
        post(op.data, got < 0 ? -errno : static_cast<int>(got), flags);
        return true;
      }
      ssize_t got = kernel_recv(op.fd, reinterpret_cast<void*>(op.addr), op.len);
      post(op.data, got < 0 ? -errno : static_cast<int>(got), 0);
      return true;
    }
    case IORING_OP_SEND: {
      std::size_t length = sends == Sends::ByteAtATime ? std::min<std::size_t>(op.len, 1) : op.len;
      ssize_t sent = kernel_send(op.fd, reinterpret_cast<const void*>(op.addr), length, op.op_flags);
      if (sent < 0 && errno == EAGAIN) return false;
      post(op.data, sent < 0 ? -errno : static_cast<int>(sent), 0);
      return true;
    }
    case IORING_OP_POLL_ADD: {
      unsigned events = ready_events(op.fd, op.op_flags);
      bool multishot = (op.len & IORING_POLL_ADD_MULTI) != 0;
      post(op.data, static_cast<int>(events), multishot ? IORING_CQE_F_MORE : 0);
      op.fired = true;
      return !multishot;
    }
    default:
      model::check(false, "the fake kernel was given an operation it does not know");
      post(op.data, -EINVAL, 0);
      return true;
  }
}

void Kernel::cancel(const Op& op) {
  bool any = (op.op_flags & IORING_ASYNC_CANCEL_ANY) != 0;
  int found = 0;
  std::erase_if(pending_, [&](const Op& target) {
    if (!any && target.data != op.addr) return false;
    post(target.data, -ECANCELED, 0);
    ++found;
    return true;
  });
  post(op.data, any ? found : (found > 0 ? 0 : -ENOENT), 0);
}

}  // namespace fake_uring

// liburing's entry points, over the fake kernel.
extern "C" {

int io_uring_queue_init_params(unsigned entries, io_uring* ring, io_uring_params* params) {
  auto kernel = std::make_unique<fake_uring::Kernel>(entries);
  kernel->map(*ring, *params);
  ring->ring_fd = ring->enter_ring_fd = fake_uring::next_fd++;
  fake_uring::kernels.emplace(ring->ring_fd, std::move(kernel));
  return 0;
}

void io_uring_queue_exit(io_uring* ring) { fake_uring::kernels.erase(ring->ring_fd); }

int io_uring_register_buf_ring(io_uring* ring, io_uring_buf_reg* registration, unsigned) {
  fake_uring::kernel_of(ring->ring_fd).register_buffers(*registration);
  return 0;
}

int io_uring_unregister_buf_ring(io_uring* ring, int) {
  fake_uring::kernel_of(ring->ring_fd).unregister_buffers();
  return 0;
}

int io_uring_enter2(unsigned fd, unsigned to_submit, unsigned min_complete, unsigned flags, sigset_t*, size_t) {
  bool timed = (flags & IORING_ENTER_EXT_ARG) != 0;
  return fake_uring::kernel_of(static_cast<int>(fd)).enter(to_submit, min_complete, timed);
}

unsigned io_uring_peek_batch_cqe(io_uring* ring, io_uring_cqe** cqes, unsigned count) {
  return fake_uring::kernel_of(ring->ring_fd).peek(cqes, count);
}

}  // extern "C"

// The system calls the backend makes itself on objects that other threads
// see (an eventfd's write and read, a socket's send, shutdown and close)
// are scheduling points, as its atomics are: the order of a system call
// and an atomic operation is part of its protocols (an eventfd drained
// before or after its flag is cleared). The executable's definitions take
// the place of the C library's; outside a model thread they only make the
// call.
extern "C" {

ssize_t write(int fd, const void* from, size_t length) {
  model::yield();
  return syscall(SYS_write, fd, from, length);
}

ssize_t read(int fd, void* into, size_t length) {
  model::yield();
  return syscall(SYS_read, fd, into, length);
}

ssize_t send(int fd, const void* from, size_t length, int flags) {
  model::yield();
  return syscall(SYS_sendto, fd, from, length, flags, nullptr, 0);
}

int shutdown(int fd, int how) {
  model::yield();
  return static_cast<int>(syscall(SYS_shutdown, fd, how));
}

int close(int fd) {
  model::yield();
  return static_cast<int>(syscall(SYS_close, fd));
}

}  // extern "C"
