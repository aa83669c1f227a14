// The pipes of a child: read(2) and write(2) through the reactor, SIGPIPE kept away.

#include "pollux/process/child_pipe.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "pollux/core/try_ready.hpp"

namespace pollux::process {

namespace {

int make_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    int error = errno;
    ::close(fd);
    pollux::detail::throw_io_error(error, "pollux::process: fcntl(O_NONBLOCK) on a child's pipe");
  }
  return fd;
}

// write(2) with SIGPIPE blocked in this thread: a pipe whose reader is gone
// answers EPIPE and the signal it raised is taken back before it is
// unblocked, so neither the process nor the thread ever sees it.
ssize_t write_without_sigpipe(int fd, const void* data, std::size_t length) {
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  sigset_t pending;
  sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE) == 1;  // someone else's: leave it
  sigset_t old;
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  ssize_t n = ::write(fd, data, length);
  int error = errno;
  if (n < 0 && error == EPIPE && !was_pending) {
    timespec now{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &now) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = error;
  return n;
}

}  // namespace

ChildStdin::ChildStdin(int fd) : source_(make_nonblocking(fd)) {}

Poll<std::size_t> ChildStdin::poll_write(Context& cx, std::span<const std::byte> data) {
  constexpr const char* kWhat = "pollux::process::ChildStdin::write";
  if (source_.fd() < 0) pollux::detail::throw_io_error(EPIPE, kWhat);
  POLLUX_TRY_READY_ASSIGN(
      auto result, source_.poll_io(
                       cx, Interest::Write, kWhat,
                       [&] { return write_without_sigpipe(source_.fd(), data.data(), data.size()); }, data.size()));
  if (result.value < 0) pollux::detail::throw_io_error(result.error, kWhat);
  return ready(static_cast<std::size_t>(result.value));
}

ChildOutput::ChildOutput(int fd) : source_(make_nonblocking(fd)) {}

Poll<std::size_t> ChildOutput::poll_read(Context& cx, std::span<std::byte> buffer) {
  constexpr const char* kWhat = "pollux::process::ChildOutput::read";
  POLLUX_TRY_READY_ASSIGN(
      auto result, source_.poll_io(
                       cx, Interest::Read, kWhat, [&] { return ::read(source_.fd(), buffer.data(), buffer.size()); },
                       buffer.size()));
  if (result.value < 0) pollux::detail::throw_io_error(result.error, kWhat);
  return ready(static_cast<std::size_t>(result.value));
}

}  // namespace pollux::process
