// WorkerRing: a multi-thread runtime's worker's own io_uring ring, as the
// IdleDriver that worker sleeps in (IdleDriver::make_thread_park). The streams the
// worker polls first run on it; only its thread enters it (SINGLE_ISSUER,
// DEFER_TASKRUN: the kernel completes operations when that thread asks,
// never by interrupting it). Other threads stage into it and wake it
// through its eventfd, which a multishot poll in the ring watches.
//
// The worker that sleeps in the driver sleeps here too: a poll on the
// driver's epoll instance (whose eventfd and timerfd are in it) stands for
// the driver's events in this ring. It is one-shot and left armed when the
// worker moves on; if it fires later, it wakes this worker once for
// nothing, while the worker then in the driver has its own poll.
#pragma once

#include <cstdint>
#include <optional>

#include "../io/ring.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/driver/detail/ring_completions.hpp"
#include "pollux/exec/idle_driver.hpp"

namespace pollux::detail {

class WorkerRing final : public IdleDriver {
 public:
  // On the worker's thread, whose ring it becomes (IoThreadContext::ring,
  // current()) until end_thread(). Throws std::system_error when the kernel
  // refuses a ring (or an eventfd).
  // `completions`, if given, counts this ring's completions for the
  // driver's metrics until end_thread().
  explicit WorkerRing(const void* driver, RingCompletions* completions = nullptr);
  ~WorkerRing() override;

  void park() override { wait(std::nullopt); }
  void poll() override { ring_->poll(); }
  void unpark() noexcept override;
  void end_thread() noexcept override;

  Ring& ring() noexcept { return *ring_; }
  // The calling thread's worker ring, if it has one.
  static WorkerRing* current() noexcept { return current_; }
  // The driver this worker's ring was made for.
  const void* driver() const noexcept { return driver_; }

  // The worker in the driver: watch `epoll_fd` from this ring (armed once
  // until it fires), sleep, and say whether it fired.
  void watch(int epoll_fd);
  void wait(std::optional<std::int64_t> timeout_ns) { ring_->wait(timeout_ns); }
  bool take_fired() noexcept;

 private:
  struct Poll : Completion {
    WorkerRing* owner;
  };
  static void on_event(Completion* self, int result, unsigned flags);
  static void on_epoll(Completion* self, int result, unsigned flags);
  void arm_event();

  const void* driver_;
  RingCompletions* completions_;
  Ring* ring_ = nullptr;  // one reference; streams hold others
  int event_fd_ = -1;
  Atomic<bool> notified_{false};  // an unpark is on its way through the eventfd
  Poll event_poll_;
  Poll epoll_poll_;
  // The poll on the driver's epoll instance (the owner's alone): not in the
  // ring, in the ring, or back with readiness that take_fired() has not seen.
  enum class EpollWatch { Idle, Armed, Fired };
  EpollWatch epoll_watch_ = EpollWatch::Idle;
  bool closed_ = false;
  static thread_local WorkerRing* current_;
};

}  // namespace pollux::detail
