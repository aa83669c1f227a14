// AsyncFd: a program's own non-blocking file descriptor (a pipe, an
// eventfd, a device, a socket made elsewhere) registered with the runtime's
// reactor, as tokio's AsyncFd. readable() and writable() are futures of a
// ReadyGuard once the direction is ready; the program then does its own
// system call through guard.try_io(op), which clears the readiness when
// the call says EAGAIN, so that the next readable() waits for the next
// edge instead of spinning. read_with(op) and write_with(op) do the whole
// loop. The fd registers on its first poll, with the driver of the thread
// that polls it (rule 8: NoRuntime if there is none), and is deregistered
// and closed with the AsyncFd (rule 5) unless release() took it back.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <fcntl.h>
#include <sys/types.h>

#include <cerrno>
#include <optional>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/io/detail/io_source.hpp"
#include "pollux/io/io_future.hpp"
#include "pollux/io/interest.hpp"

namespace pollux {

class AsyncFd;

/// What readable() or writable() gives: the direction is ready now. Use
/// try_io for the system call; call clear_ready() yourself after a call of
/// your own that found nothing to do.
class ReadyGuard {
 public:
  /// Made by the futures of readable() and writable().
  ReadyGuard(AsyncFd& fd, detail::ReadyEvent event) noexcept : fd_(&fd), event_(event) {}

  /// Forgets this readiness: the next readable()/writable() waits for an edge.
  void clear_ready() noexcept;

  /// Runs op() (a non-blocking call returning ssize_t: -1 and errno on
  /// failure). Its result, or nullopt after EAGAIN (the readiness is then
  /// cleared: wait again). Other errors are thrown as std::system_error.
  template <class Op>
  std::optional<ssize_t> try_io(Op&& op);

 private:
  AsyncFd* fd_;
  detail::ReadyEvent event_;  // the readiness seen, and the tick it was seen at
};

/// A program's own non-blocking file descriptor (a pipe, an eventfd, a device, a socket made
/// elsewhere) registered with the runtime's reactor, as tokio's AsyncFd.
class AsyncFd {
 public:
  class ReadyOp;
  template <class Op>
  class WithOp;
  /// What readable() and writable() return: a future of a ReadyGuard.
  using Ready = IoFuture<ReadyOp>;
  /// What read_with(op) and write_with(op) return: a future of op's result.
  template <class Op>
  using With = IoFuture<WithOp<Op>>;

  /// Takes ownership of `fd` and makes it non-blocking (std::system_error
  /// if it cannot be).
  explicit AsyncFd(int fd) : source_(fd, detail::IoSource::StartNotReady{}) {
    int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
      int error = errno;
      source_ = detail::IoSource();  // closes it: we own it now
      detail::throw_io_error(error, "pollux::AsyncFd: fcntl(O_NONBLOCK)");
    }
  }
  AsyncFd(AsyncFd&&) noexcept = default;
  AsyncFd& operator=(AsyncFd&&) noexcept = default;

  /// The file descriptor; this object still owns it.
  int fd() const noexcept { return source_.fd(); }

  /// A future of a ReadyGuard once the fd is readable.
  Ready readable() noexcept;
  /// A future of a ReadyGuard once the fd is writable.
  Ready writable() noexcept;

  /// A future that runs op() once the fd is readable, again after each
  /// EAGAIN, and is Ready with its result (errors thrown).
  template <class Op>
  With<Op> read_with(Op op) noexcept;
  /// The same for writing.
  template <class Op>
  With<Op> write_with(Op op) noexcept;

  /// For the futures above: Ready when `direction` is ready, else Pending with
  /// the waker of `cx` kept. Throws NoRuntime outside a runtime.
  Poll<detail::ReadyEvent> poll_ready(Context& cx, Interest interest) {
    return source_.poll_ready(cx, interest, "pollux::AsyncFd");
  }
  /// Forgets the readiness seen in `event`, so the next poll_ready waits.
  void clear_readiness(detail::ReadyEvent event) noexcept { source_.clear_readiness(event); }
  /// A future going away lets go of its waker for `direction` (rule 5).
  void abandon(Interest interest) noexcept { source_.abandon(interest); }

 private:
  detail::IoSource source_;
};

inline void ReadyGuard::clear_ready() noexcept { fd_->clear_readiness(event_); }

template <class Op>
std::optional<ssize_t> ReadyGuard::try_io(Op&& op) {
  for (;;) {
    ssize_t result = op();
    if (result >= 0) return result;
    int error = errno;
    if (error == EINTR) continue;
    if (error == EAGAIN || error == EWOULDBLOCK) {
      clear_ready();
      return std::nullopt;
    }
    detail::throw_io_error(error, "pollux::AsyncFd");
  }
}

/// The operation of readable() and writable(): a wait for the interest,
/// Ready with a guard of the readiness seen.
class AsyncFd::ReadyOp {
 public:
  using Output = ReadyGuard;

  /// The wait on `fd` for `interest`.
  ReadyOp(AsyncFd& fd, Interest interest) noexcept : fd_(&fd), interest_(interest) {}

  /// Ready with a guard once the descriptor is ready for the interest.
  Poll<ReadyGuard> poll(Context& cx) {
    Poll<detail::ReadyEvent> event = fd_->poll_ready(cx, interest_);
    if (event.is_pending()) return pending;
    return ready(ReadyGuard(*fd_, event.value()));
  }
  /// Gives the descriptor's waker for the interest back.
  void abandon() noexcept { fd_->abandon(interest_); }

 private:
  AsyncFd* fd_;
  Interest interest_;
};

/// The operation of read_with(op) and write_with(op): op() run once the
/// descriptor is ready, again after each EAGAIN (which clears the readiness).
template <class Op>
class AsyncFd::WithOp {
 public:
  using Output = ssize_t;

  /// `op` on `fd` once it is ready for `interest`.
  WithOp(AsyncFd& fd, Interest interest, Op op) : fd_(&fd), interest_(interest), op_(std::move(op)) {}

  /// Ready with op's result once it did not say EAGAIN; its other errors are thrown.
  Poll<ssize_t> poll(Context& cx) {
    for (;;) {
      Poll<detail::ReadyEvent> event = fd_->poll_ready(cx, interest_);
      if (event.is_pending()) return pending;
      ReadyGuard guard(*fd_, event.value());
      if (auto result = guard.try_io(op_)) return ready(*result);
      // EAGAIN: the readiness is cleared, so the next poll_ready waits for an edge.
    }
  }
  /// Gives the descriptor's waker for the interest back.
  void abandon() noexcept { fd_->abandon(interest_); }

 private:
  AsyncFd* fd_;
  Interest interest_;
  Op op_;
};

inline AsyncFd::Ready AsyncFd::readable() noexcept { return Ready(*this, Interest::Read); }
inline AsyncFd::Ready AsyncFd::writable() noexcept { return Ready(*this, Interest::Write); }

template <class Op>
AsyncFd::With<Op> AsyncFd::read_with(Op op) noexcept {
  return With<Op>(*this, Interest::Read, std::move(op));
}
template <class Op>
AsyncFd::With<Op> AsyncFd::write_with(Op op) noexcept {
  return With<Op>(*this, Interest::Write, std::move(op));
}

}  // namespace pollux
