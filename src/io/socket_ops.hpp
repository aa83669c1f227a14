// What the socket sources share: making a socket, asking its address, and
// the system calls that read and write it.
#pragma once

#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>

#include "pollux/io/socket_addr.hpp"

namespace pollux::detail {

// socket(2), non-blocking and close-on-exec. Throws std::system_error
// "<operation> <addr>: socket: ..." (the message is built only then: a
// connect that succeeds allocates nothing).
int open_socket(const SocketAddr& addr, int type, const char* operation);

// getsockname(2).
SocketAddr local_addr_of(int fd);

// recv, send and sendmsg as raw system calls. glibc's wrappers are thread
// cancellation points: around each call they switch asynchronous
// cancellation on and off, some twenty instructions a call, on every read
// and write (about 60 instructions of an echo round trip on epoll). The
// library's sockets are non-blocking, so no call here waits and there is
// nothing for a cancellation to interrupt. Each returns what the libc call
// returns: a count, or -1 with errno set. Under a sanitizer the libc calls
// stay: AddressSanitizer's interceptors check the buffers, and
// ThreadSanitizer's record the order a socket gives two threads.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define POLLUX_SOCKET_CALLS_THROUGH_LIBC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define POLLUX_SOCKET_CALLS_THROUGH_LIBC 1
#endif
#endif

#if defined(POLLUX_SOCKET_CALLS_THROUGH_LIBC)
inline ssize_t sys_recv(int fd, void* data, std::size_t size, int flags) noexcept {
  return ::recv(fd, data, size, flags);
}
inline ssize_t sys_send(int fd, const void* data, std::size_t size, int flags) noexcept {
  return ::send(fd, data, size, flags);
}
inline ssize_t sys_sendmsg(int fd, const msghdr* message, int flags) noexcept { return ::sendmsg(fd, message, flags); }
#else
inline ssize_t sys_recv(int fd, void* data, std::size_t size, int flags) noexcept {
  return ::syscall(SYS_recvfrom, fd, data, size, flags, nullptr, nullptr);
}
inline ssize_t sys_send(int fd, const void* data, std::size_t size, int flags) noexcept {
  return ::syscall(SYS_sendto, fd, data, size, flags, nullptr, 0);
}
inline ssize_t sys_sendmsg(int fd, const msghdr* message, int flags) noexcept {
  return ::syscall(SYS_sendmsg, fd, message, flags);
}
#endif

}  // namespace pollux::detail
