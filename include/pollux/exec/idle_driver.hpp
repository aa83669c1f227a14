// IdleDriver: what an executor's idle thread sleeps in when there is more to
// watch than its run queue: the runtime's Driver (timers and sockets). The
// executor calls park() when it has no task to run, and poll() every so
// many tasks, so that due timers fire even while tasks keep it busy. Any
// thread may call unpark(). An IdleDriver is reference-counted: executors and their
// parkers hold it, so an unpark racing an executor's shutdown never reaches
// freed memory (rule 6).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include "pollux/core/wake.hpp"

namespace pollux {

/// What an executor's idle thread sleeps in when there is more to watch than its run queue: the
/// runtime's Driver (timers and sockets).
class IdleDriver : public RefCounted<IdleDriver> {
 public:
  virtual ~IdleDriver() = default;

  /// Blocks until unpark() was called or an event is ready (a timer is
  /// due), and dispatches what is ready: wakes the timers that expired.
  /// An unpark() that came before the call makes it return at once.
  virtual void park() = 0;

  /// Dispatches what is ready without blocking.
  virtual void poll() = 0;

  /// Makes a park() in progress, or the next one, return. Any thread.
  virtual void unpark() noexcept = 0;

  /// For a thread pool's worker, on its thread, before it first parks: a
  /// IdleDriver of that thread's own, which it sleeps in (and polls) while
  /// another worker sleeps in this one, or null, and it sleeps on a futex
  /// then. The driver gives each worker an io_uring ring this way, whose
  /// completions only its own thread may collect.
  virtual Arc<IdleDriver> make_thread_park() { return {}; }

  /// A thread park's last call, on its thread, once no worker of the pool
  /// runs tasks any more: it gives up what only that thread may (a ring's
  /// operations, cancelled and reaped). Later calls of unpark() are
  /// harmless; park() and poll() must not follow it.
  virtual void end_thread() noexcept {}

  /// For a loop that is not pollux's (an Asio io_context): a file
  /// descriptor that becomes readable whenever park() would return (a
  /// timer due, an event, an unpark), or -1 when this driver has none.
  virtual int wait_fd() const noexcept { return -1; }

  /// Instead of park(), for a loop that waits on wait_fd() itself: arms
  /// what makes it readable (the next timer). False when there is work
  /// already (a timer is due): then do not wait. Precondition: wait_fd()
  /// is not -1; end_external_wait() follows each call that returned true.
  virtual bool begin_external_wait() { return false; }

  /// The outside wait is over (wait_fd() was readable, or the loop turns
  /// again for another reason): dispatches what is ready, without blocking.
  /// `look_at_fd` false: the loop knows wait_fd() did not wake it (it was
  /// handed work directly), so only due timers fire; if the fd is readable
  /// all the same, the loop's wait on it ends and the next call looks.
  virtual void end_external_wait(bool look_at_fd) {
    (void)look_at_fd;
    poll();
  }
};

}  // namespace pollux
