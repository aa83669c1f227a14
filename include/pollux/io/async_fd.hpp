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

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <fcntl.h>
#include <sys/types.h>

#include <cerrno>
#include <optional>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/io/detail/io_source.hpp"

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
  class Ready;
  template <class Op>
  class With;

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
  Poll<detail::ReadyEvent> poll_ready(Context& cx, detail::Direction direction) {
    return source_.poll_ready(cx, direction, "pollux::AsyncFd");
  }
  /// Forgets the readiness seen in `event`, so the next poll_ready waits.
  void clear_readiness(detail::ReadyEvent event) noexcept { source_.clear_readiness(event); }
  /// A future going away lets go of its waker for `direction` (rule 5).
  void abandon(detail::Direction direction) noexcept { source_.abandon(direction); }

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

/// The future of readable() and writable(). Destroyed while it waits, it
/// takes its waker back (rule 5).
class [[nodiscard("futures do nothing unless polled")]] AsyncFd::Ready {
 public:
  using Output = ReadyGuard;

  /// What readable() and writable() make.
  Ready(AsyncFd & fd, detail::Direction direction) noexcept : fd_(&fd), direction_(direction) {}
  Ready(Ready && other) noexcept
      : fd_(other.fd_), direction_(other.direction_), state_(std::exchange(other.state_, State::Done)) {}
  Ready& operator=(Ready&&) = delete;
  ~Ready() {
    if (state_ == State::Waiting) fd_->abandon(direction_);
  }

  /// Ready with a guard once the descriptor is readable.
  Poll<ReadyGuard> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(AsyncFd::Ready, state_ != State::Done);
    Poll<detail::ReadyEvent> event = fd_->poll_ready(cx, direction_);
    if (event.is_pending()) {
      state_ = State::Waiting;
      return pending;
    }
    state_ = State::Done;
    return ready(ReadyGuard(*fd_, event.value()));
  }

 private:
  enum class State { Start, Waiting, Done };
  AsyncFd* fd_;
  detail::Direction direction_;
  State state_ = State::Start;
};

/// The future of read_with(op) and write_with(op).
template <class Op>
class [[nodiscard("futures do nothing unless polled")]] AsyncFd::With {
 public:
  using Output = ssize_t;

  /// What read_with() and write_with() make.
  With(AsyncFd & fd, detail::Direction direction, Op op) : fd_(&fd), direction_(direction), op_(std::move(op)) {}
  With(With && other) noexcept
      : fd_(other.fd_),
        direction_(other.direction_),
        op_(std::move(other.op_)),
        state_(std::exchange(other.state_, State::Done)) {}
  With& operator=(With&&) = delete;
  ~With() {
    if (state_ == State::Waiting) fd_->abandon(direction_);
  }

  /// Runs the operation once the descriptor is ready for it; Ready with its result.
  Poll<ssize_t> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(With<Op>, state_ != State::Done);
    for (;;) {
      Poll<detail::ReadyEvent> event = fd_->poll_ready(cx, direction_);
      if (event.is_pending()) {
        state_ = State::Waiting;
        return pending;
      }
      ReadyGuard guard(*fd_, event.value());
      state_ = State::Done;  // an exception from try_io ends it too
      if (auto result = guard.try_io(op_)) return ready(*result);
      state_ = State::Start;  // EAGAIN: readiness cleared, wait for the next edge
    }
  }

 private:
  enum class State { Start, Waiting, Done };
  AsyncFd* fd_;
  detail::Direction direction_;
  Op op_;
  State state_ = State::Start;
};

inline AsyncFd::Ready AsyncFd::readable() noexcept { return Ready(*this, detail::Direction::Read); }
inline AsyncFd::Ready AsyncFd::writable() noexcept { return Ready(*this, detail::Direction::Write); }

template <class Op>
AsyncFd::With<Op> AsyncFd::read_with(Op op) noexcept {
  return With<Op>(*this, detail::Direction::Read, std::move(op));
}
template <class Op>
AsyncFd::With<Op> AsyncFd::write_with(Op op) noexcept {
  return With<Op>(*this, detail::Direction::Write, std::move(op));
}

}  // namespace pollux
