// The reads and writes of StreamSocket, inline into the socket types'
// operations that call them (tcp.cpp, unix.cpp): on epoll a read is a
// readiness test and one system call, and a call of its own, with its
// frame and its result passed through memory, cost as much again.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <cstddef>
#include <span>

#include "pollux/core/coop.hpp"
#include "pollux/io/detail/stream_socket.hpp"
#include "socket_ops.hpp"
#include "uring_stream.hpp"

namespace pollux::detail {

// sendmsg of up to kMaxIov buffers (writev without SIGPIPE); the rest go
// with the next write, as a short write's do. `asked` is what it offers.
inline constexpr std::size_t kMaxIov = 64;
struct Gather {
  iovec iov[kMaxIov];
  std::size_t count = 0;
  std::size_t asked = 0;

  explicit Gather(std::span<const std::span<const std::byte>> buffers) noexcept {
    for (auto& buffer : buffers) {
      if (count == kMaxIov) break;
      if (buffer.empty()) continue;
      iov[count++] = iovec{const_cast<std::byte*>(buffer.data()), buffer.size()};
      asked += buffer.size();
    }
  }
  ssize_t send(int fd) noexcept {
    if (count == 1) return sys_send(fd, iov[0].iov_base, iov[0].iov_len, MSG_NOSIGNAL);  // EPIPE, not SIGPIPE
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = count;
    return sys_sendmsg(fd, &message, MSG_NOSIGNAL);
  }
};

[[gnu::always_inline]] inline Poll<SysResult> StreamSocket::poll_read(Context& cx, std::span<std::byte> buffer,
                                                                      const char* what, bool peek) {
  if (UringStream* stream = ring()) {
    // A peek takes nothing, so it spends none of the task's budget.
    if (!peek && !coop::poll_proceed(cx)) return pending;
    return stream->poll_read(&cx, buffer, peek);
  }
  int fd = source_.fd();
  if (peek) {
    // No `asked`: a peek leaves the bytes queued, so a short one does not
    // mean the queue is empty.
    return source_.poll_io(cx, Interest::Read, what,
                           [&] { return sys_recv(fd, buffer.data(), buffer.size(), MSG_PEEK); });
  }
  return source_.poll_io(
      cx, Interest::Read, what, [&] { return sys_recv(fd, buffer.data(), buffer.size(), 0); }, buffer.size());
}

[[gnu::always_inline]] inline Poll<SysResult> StreamSocket::poll_write(
    Context& cx, std::span<const std::span<const std::byte>> buffers, const char* what) {
  if (UringStream* stream = ring()) {
    if (!coop::poll_proceed(cx)) return pending;
    return stream->poll_write(&cx, buffers);
  }
  int fd = source_.fd();
  if (buffers.size() == 1) {  // a plain write: no gathering
    std::span<const std::byte> bytes = buffers[0];
    return source_.poll_io(
        cx, Interest::Write, what, [&] { return sys_send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL); },
        bytes.size());
  }
  Gather gather(buffers);
  return source_.poll_io(
      cx, Interest::Write, what, [&] { return gather.send(fd); }, gather.asked);
}

}  // namespace pollux::detail
