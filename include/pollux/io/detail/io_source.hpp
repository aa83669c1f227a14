// IoSource: a non-blocking file descriptor and its registration with the
// reactor, the part every socket is built on (as tokio's PollEvented). It
// registers on its first poll, with the reactor of the thread that polls
// it, so a socket can be made anywhere and moved freely (the registration
// lives in the reactor, not in the IoSource). Two tasks on two threads may
// poll it for the first time at once (a reader and a writer): exactly one
// of them registers it. poll_io tries an operation
// while its direction is ready, and on EAGAIN clears the readiness and
// waits for the next edge with the waker of this poll (rule 2).
// Destroying it deregisters, then closes the fd (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <sys/types.h>

#include <cerrno>
#include <cstddef>
#include <string>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/coop.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/io/detail/reactor.hpp"

namespace pollux::detail {

// One system call's outcome: its result (>= 0), or -1 and its errno.
struct SysResult {
  ssize_t value;
  int error;
};

// Throws std::system_error(error) whose message is `what` (which names
// the operation and the address, "pollux::TcpStream::connect to 1.2.3.4:5").
[[noreturn]] void throw_io_error(int error, const std::string& what);

class IoSource {
 public:
  IoSource() noexcept = default;
  // Takes ownership of `fd`, which must be non-blocking. A socket's first
  // operation is tried at once (its readiness starts set), since the system
  // call itself says EAGAIN if it must wait.
  explicit IoSource(int fd) noexcept : fd_(fd) {}
  // For AsyncFd, whose readiness is reported without a system call: it
  // starts empty, and epoll's first event (edge-triggered registration
  // reports what is ready already) sets it.
  struct StartNotReady {};
  IoSource(int fd, StartNotReady) noexcept : fd_(fd), start_ready_(false) {}
  IoSource(IoSource&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)),
        start_ready_(other.start_ready_),
        io_(other.io_.exchange(nullptr, std::memory_order_relaxed)),
        reactor_(std::move(other.reactor_)) {}
  IoSource& operator=(IoSource&& other) noexcept {
    if (this != &other) {
      close();
      fd_ = std::exchange(other.fd_, -1);
      start_ready_ = other.start_ready_;
      io_.store(other.io_.exchange(nullptr, std::memory_order_relaxed), std::memory_order_relaxed);
      reactor_ = std::move(other.reactor_);
    }
    return *this;
  }
  ~IoSource() { close(); }

  int fd() const noexcept { return fd_; }

  // Runs `op` (a non-blocking system call returning ssize_t, -1 and errno
  // on failure) once `direction` is ready, again after EINTR, and waits
  // for the next edge after EAGAIN. `what` names the socket for errors:
  // NoRuntime when no driver is installed or the driver is gone.
  //
  // `asked`: for a stream, the bytes the call asked for. Fewer means the
  // call emptied the receive buffer (or filled the send buffer), so the
  // readiness is cleared now and the next call waits for an edge instead
  // of making a system call only to get EAGAIN, which saves one of the
  // three system calls of an echo round trip (tokio does the same). Data
  // that comes after the call brings a new edge, which the tick protects.
  template <class Op>
  [[gnu::always_inline]] Poll<SysResult> poll_io(Context& cx, Interest interest, const char* what, Op&& op,
                                                 std::size_t asked = 0) {
    ScheduledIo& io = registration(what);
    // A socket that is always ready (a fast peer) must not keep its task
    // from yielding: each try spends a unit of the task's budget.
    if (!coop::poll_proceed(cx)) return pending;
    for (;;) {
      Poll<ReadyEvent> event = io.poll_ready(cx, interest);
      if (event.is_pending()) return pending;
      if (event.value().ready & readiness::kShutdown) throw_driver_gone(what);
      ssize_t result = op();
      if (result >= 0) {
        if (static_cast<std::size_t>(result) < asked) io.clear_readiness(event.value());
        return ready(SysResult{result, 0});
      }
      int error = errno;
      if (error == EAGAIN || error == EWOULDBLOCK) {
        io.clear_readiness(event.value());
      } else if (error != EINTR) {
        return ready(SysResult{-1, error});
      }
    }
  }

  // Ready once `direction` is ready (or the peer closed it), without any
  // system call; Pending stores the waker of this poll (rule 2). What
  // AsyncFd's readiness futures wait on.
  Poll<ReadyEvent> poll_ready(Context& cx, Interest interest, const char* what) {
    Poll<ReadyEvent> event = registration(what).poll_ready(cx, interest);
    if (event.is_ready() && (event.value().ready & readiness::kShutdown)) throw_driver_gone(what);
    return event;
  }

  // Forgets the readiness `event` reported, after an operation found the
  // fd not ready after all (EAGAIN): the next poll_ready waits for an edge.
  // An event that came after `event` is kept (its tick differs).
  // One attempt of `op` without waiting and without storing a waker:
  // EAGAIN when the direction is not ready (or op found it was not, which
  // clears the readiness so that the next poll_ready waits).
  template <class Op>
  SysResult try_io(Interest interest, const char* what, Op&& op) {
    ScheduledIo& io = registration(what);
    ReadyEvent event = io.ready_now(interest);
    if (event.ready & readiness::kShutdown) throw_driver_gone(what);
    if (event.ready == 0) return SysResult{-1, EAGAIN};
    for (;;) {
      ssize_t result = op();
      if (result >= 0) return SysResult{result, 0};
      int error = errno;
      if (error == EINTR) continue;
      if (error == EAGAIN || error == EWOULDBLOCK) {
        io.clear_readiness(event);
        return SysResult{-1, EAGAIN};
      }
      return SysResult{-1, error};
    }
  }

  void clear_readiness(ReadyEvent event) noexcept {
    if (ScheduledIo* io = io_.load(std::memory_order_acquire)) io->clear_readiness(event);
  }

  // A future that got Pending from poll_io is going away: take back its
  // waker, so nothing is left behind to wake a task that no longer waits.
  void abandon(Interest interest) noexcept {
    if (ScheduledIo* io = io_.load(std::memory_order_acquire)) io->abandon(interest);
  }

  // Deregisters and closes the fd now; the destructor does the same.
  void close() noexcept;

  // Whether a poll registered the fd with a reactor.
  bool is_registered() const noexcept { return io_.load(std::memory_order_acquire) != nullptr; }
  // Deregisters the fd (if registered) and gives it up without closing it:
  // the source is left empty. For a socket moving to the io_uring backend.
  int release() noexcept;

 private:
  ScheduledIo& registration(const char* what) {
    ScheduledIo* io = io_.load(std::memory_order_acquire);
    return io != nullptr ? *io : register_once(what);
  }
  ScheduledIo& register_once(const char* what);
  [[noreturn]] static void throw_driver_gone(const char* what);

  int fd_ = -1;
  bool start_ready_ = true;
  // Set once, by the first poll_io (published with release after reactor_).
  Atomic<ScheduledIo*> io_{nullptr};
  Arc<Reactor> reactor_;  // keeps the reactor (its slab, its epoll) alive while registered
};

}  // namespace pollux::detail
