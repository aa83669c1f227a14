// A worker's ring: its eventfd for unpark, its poll on the driver's epoll
// instance, and its end on the worker's own thread.
#include "worker_ring.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "event_fd.hpp"
#include "pollux/io/detail/io_context.hpp"

namespace pollux::detail {

thread_local WorkerRing* WorkerRing::current_ = nullptr;

WorkerRing::WorkerRing(const void* driver, RingCompletions* completions) : driver_(driver), completions_(completions) {
  event_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (event_fd_ < 0) throw std::system_error(errno, std::system_category(), "pollux: a worker's eventfd");
  try {
    ring_ = new Ring([](void* self) { static_cast<WorkerRing*>(self)->unpark(); }, this);
  } catch (...) {
    ::close(event_fd_);
    throw;
  }
  intrusive_ptr_add_ref(ring_);
  event_poll_.complete = &on_event;
  event_poll_.owner = this;
  epoll_poll_.complete = &on_epoll;
  epoll_poll_.owner = this;
  arm_event();
  if (completions_ != nullptr) {
    try {
      completions_->join(ring_);
    } catch (...) {
      intrusive_ptr_release(ring_);  // shuts the ring down, its poll with it
      ::close(event_fd_);
      throw;
    }
  }
  current_ = this;
  io_context().ring = ring_;
}

WorkerRing::~WorkerRing() {
  end_thread();
  intrusive_ptr_release(ring_);
  ::close(event_fd_);
}

void WorkerRing::arm_event() {
  ring_->stage(&event_poll_, [&](io_uring_sqe* sqe) { io_uring_prep_poll_multishot(sqe, event_fd_, POLLIN); });
}

void WorkerRing::on_event(Completion* self, int result, unsigned flags) {
  WorkerRing& ring = *static_cast<Poll*>(self)->owner;
  if (result >= 0) drain_event_fd(ring.event_fd_, ring.notified_);
  // A multishot poll the kernel ended (not a cancellation) is armed again.
  if (!(flags & IORING_CQE_F_MORE) && result != -ECANCELED && !ring.ring_->is_shut_down()) ring.arm_event();
}

void WorkerRing::unpark() noexcept { signal_event_fd(event_fd_, notified_); }

void WorkerRing::watch(int epoll_fd) {
  // Readiness seen earlier and not taken is stale: epoll is level-triggered,
  // so a new poll fires again if it still holds.
  if (epoll_watch_ == EpollWatch::Armed) return;
  epoll_watch_ = EpollWatch::Idle;
  if (ring_->stage(&epoll_poll_, [&](io_uring_sqe* sqe) { io_uring_prep_poll_add(sqe, epoll_fd, POLLIN); })) {
    epoll_watch_ = EpollWatch::Armed;
  }
}

void WorkerRing::on_epoll(Completion* self, int result, unsigned) {
  WorkerRing& ring = *static_cast<Poll*>(self)->owner;
  ring.epoll_watch_ = result >= 0 ? EpollWatch::Fired : EpollWatch::Idle;
}

bool WorkerRing::take_fired() noexcept {
  if (epoll_watch_ != EpollWatch::Fired) return false;
  epoll_watch_ = EpollWatch::Idle;
  return true;
}

void WorkerRing::end_thread() noexcept {
  if (closed_) return;
  closed_ = true;
  if (current_ == this) {
    current_ = nullptr;
    io_context().ring = nullptr;
  }
  ring_->shut_down();  // on the worker's thread: cancels and reaps every operation
  if (completions_ != nullptr) completions_->leave(ring_, ring_->completions());
}

}  // namespace pollux::detail
