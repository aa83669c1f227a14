// What the socket sources share: making a socket, asking its address, and
// the system calls that read and write it.
#pragma once

#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>

#include "pollux/io/socket_addr.hpp"

namespace pollux::detail {

// socket(2), non-blocking and close-on-exec. Throws std::system_error
// "<operation> <addr>: socket: ..." (the message is built only then: a
// connect that succeeds allocates nothing).
int open_socket(const SocketAddr& addr, int type, const char* operation);

// getsockname(2).
SocketAddr local_addr_of(int fd);

// recv, send, sendmsg, sendto and recvfrom as raw system calls. glibc's wrappers are thread
// cancellation points: around each call they switch asynchronous
// cancellation on and off, some twenty instructions a call, on every read
// and write (about 60 instructions of an echo round trip on epoll); and
// glibc's generic syscall() is a variadic function that shuffles all six
// arguments, so on x86-64 and AArch64 the instruction is issued inline.
// The library's sockets are non-blocking, so no call here waits and there
// is nothing for a cancellation to interrupt. Each returns what the libc
// call returns: a count, or -1 with errno set. Under a sanitizer the libc
// calls stay: AddressSanitizer's interceptors check the buffers, and
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
inline ssize_t sys_sendto(int fd, const void* data, std::size_t size, int flags, const sockaddr* to,
                          socklen_t to_length) noexcept {
  return ::sendto(fd, data, size, flags, to, to_length);
}
inline ssize_t sys_recvfrom(int fd, void* data, std::size_t size, int flags, sockaddr* from,
                            socklen_t* from_length) noexcept {
  return ::recvfrom(fd, data, size, flags, from, from_length);
}
#else
// System call `number` with six arguments: the kernel's result, a
// negative errno on failure, turned into libc's -1 and errno.
inline ssize_t raw_syscall(long number, long a1, long a2, long a3, long a4, long a5, long a6) noexcept {
  long result;
#if defined(__x86_64__)
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(number), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
#elif defined(__aarch64__)
  register long x8 __asm__("x8") = number;
  register long x0 __asm__("x0") = a1;
  register long x1 __asm__("x1") = a2;
  register long x2 __asm__("x2") = a3;
  register long x3 __asm__("x3") = a4;
  register long x4 __asm__("x4") = a5;
  register long x5 __asm__("x5") = a6;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
  result = x0;
#else
  return ::syscall(number, a1, a2, a3, a4, a5, a6);
#endif
  if (static_cast<unsigned long>(result) > -4096UL) [[unlikely]] {
    errno = static_cast<int>(-result);
    return -1;
  }
  return result;
}

inline long arg(const void* pointer) noexcept { return reinterpret_cast<long>(pointer); }

inline ssize_t sys_sendto(int fd, const void* data, std::size_t size, int flags, const sockaddr* to,
                          socklen_t to_length) noexcept {
  return raw_syscall(SYS_sendto, fd, arg(data), static_cast<long>(size), flags, arg(to), to_length);
}
inline ssize_t sys_recvfrom(int fd, void* data, std::size_t size, int flags, sockaddr* from,
                            socklen_t* from_length) noexcept {
  return raw_syscall(SYS_recvfrom, fd, arg(data), static_cast<long>(size), flags, arg(from), arg(from_length));
}
inline ssize_t sys_recv(int fd, void* data, std::size_t size, int flags) noexcept {
  return sys_recvfrom(fd, data, size, flags, nullptr, nullptr);
}
inline ssize_t sys_send(int fd, const void* data, std::size_t size, int flags) noexcept {
  return sys_sendto(fd, data, size, flags, nullptr, 0);
}
inline ssize_t sys_sendmsg(int fd, const msghdr* message, int flags) noexcept {
  return raw_syscall(SYS_sendmsg, fd, arg(message), flags, 0, 0, 0);
}
#endif

}  // namespace pollux::detail
