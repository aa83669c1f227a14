// A stream socket's operations on each backend, and the one decision
// between them. The epoll side is here whole: each operation is one
// system call run by IoSource::poll_io while its interest is ready.
#include "pollux/io/detail/stream_socket.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>

#include "pollux/core/coop.hpp"
#include "pollux/core/no_runtime.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/io/detail/io_context.hpp"
#include "socket_ops.hpp"
#include "stream_socket_io.hpp"
#include "uring_stream.hpp"

namespace pollux::detail {

namespace {

// Deciding happens once per socket, so one lock for all of them costs
// nothing that matters (as IoSource's registration).
Mutex decide_mutex;

}  // namespace

void throw_stream_error(int error, const char* type, const char* operation, const char* preposition,
                        const std::string& peer) {
  if (error == kDriverGone) {
    throw NoRuntime(std::string(type) + "::" + operation + ": the driver it was registered with was destroyed");
  }
  throw_io_error(error, std::string(type) + "::" + operation + " " + preposition + " " + peer);
}

UringStream* StreamSocket::decide() {
  MutexLock lock(decide_mutex);
  std::uintptr_t backend = backend_.load(std::memory_order_relaxed);
  if (backend != kUndecided) return backend == kEpoll ? nullptr : reinterpret_cast<UringStream*>(backend);
  // A socket registered with epoll already (a connect waited there) stays
  // there, so that no event is lost in a move.
  Ring* ring = io_context().ring;
  if (ring == nullptr || source_.is_registered() || source_.fd() < 0) {
    backend_.store(kEpoll, std::memory_order_release);
    return nullptr;
  }
  UringStream* stream = UringStream::open(*ring, source_.fd());
  (void)source_.release();
  backend_.store(reinterpret_cast<std::uintptr_t>(stream), std::memory_order_release);
  return stream;
}

Poll<SysResult> StreamSocket::poll_ready(Context& cx, Interest interest, const char* what) {
  if (UringStream* stream = ring()) {
    return interest == Interest::Read ? stream->poll_read_ready(cx) : stream->poll_write_ready(cx);
  }
  if (source_.poll_ready(cx, interest, what).is_pending()) return pending;
  return ready(SysResult{0, 0});
}

SysResult StreamSocket::try_read(std::span<std::byte> buffer, const char* what) {
  if (UringStream* stream = ring()) return stream->try_read(buffer);
  int fd = source_.fd();
  return source_.try_io(Interest::Read, what, [&] { return sys_recv(fd, buffer.data(), buffer.size(), 0); });
}

SysResult StreamSocket::try_write(std::span<const std::span<const std::byte>> buffers, const char* what) {
  if (UringStream* stream = ring()) return stream->try_write(buffers);
  Gather gather(buffers);
  int fd = source_.fd();
  return source_.try_io(Interest::Write, what, [&] { return gather.send(fd); });
}

Poll<SysResult> StreamSocket::poll_flush(Context& cx) {
  if (UringStream* stream = ring_if_any()) return stream->poll_flush(cx);
  return ready(SysResult{0, 0});
}

SysResult StreamSocket::shutdown(int how) {
  if (UringStream* stream = ring_if_any()) {
    if (how != SHUT_RD) {
      SysResult result = stream->shutdown_write();
      if (result.error != 0) return result;
    }
    if (how != SHUT_WR && ::shutdown(stream->fd(), SHUT_RD) < 0) return SysResult{-1, errno};
    return SysResult{0, 0};
  }
  if (::shutdown(source_.fd(), how) < 0) return SysResult{-1, errno};
  return SysResult{0, 0};
}

void StreamSocket::abandon(Interest interest) noexcept {
  if (UringStream* stream = ring_if_any()) return stream->abandon(interest);
  source_.abandon(interest);
}

int StreamSocket::fd() const noexcept {
  if (UringStream* stream = ring_if_any()) return stream->fd();
  return source_.fd();
}

void StreamSocket::close() noexcept {
  std::uintptr_t backend = backend_.exchange(kUndecided, std::memory_order_acq_rel);
  if (backend > kEpoll) reinterpret_cast<UringStream*>(backend)->close();
  source_.close();
}

}  // namespace pollux::detail
