// Unix domain sockets: the system calls behind UnixListener, UnixStream and
// UnixDatagram.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>

#include "pollux/io/unix_socket.hpp"

#include "pollux/io/detail/io_context.hpp"
#include "socket_ops.hpp"
#include "stream_socket_io.hpp"

namespace pollux {

namespace {

// A sockaddr_un for `path` (abstract when it starts with a NUL byte).
struct UnixAddr {
  sockaddr_un addr{};
  socklen_t length = 0;

  UnixAddr(std::string_view path, const char* what) {
    addr.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof addr.sun_path) {
      throw std::invalid_argument(std::string(what) + ": a Unix socket path must have 1 to "
                                  + std::to_string(sizeof addr.sun_path - 1) + " bytes");
    }
    std::memcpy(addr.sun_path, path.data(), path.size());
    length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + (path[0] == '\0' ? 0 : 1));
  }
  const sockaddr* native() const noexcept { return reinterpret_cast<const sockaddr*>(&addr); }
};

// The path in a sockaddr_un the kernel filled ("" for an unnamed socket).
std::string path_of(const sockaddr_un& addr, socklen_t length) {
  if (length <= offsetof(sockaddr_un, sun_path)) return {};
  std::size_t n = length - offsetof(sockaddr_un, sun_path);
  if (addr.sun_path[0] != '\0') n = ::strnlen(addr.sun_path, n);
  return std::string(addr.sun_path, n);
}

// For messages: an abstract name shows with a leading '@'.
std::string printable(std::string_view path) {
  if (path.empty() || path[0] != '\0') return std::string(path);
  std::string out(1, '@');  // appended, not `"@" + ...`: see SocketAddr::to_string
  out += path.substr(1);
  return out;
}

int open_unix(int type, const std::string& what) {
  int fd = ::socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) detail::throw_io_error(errno, what + ": socket");
  return fd;
}

}  // namespace

// UnixStream

std::pair<UnixStream, UnixStream> UnixStream::pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) < 0) {
    detail::throw_io_error(errno, "pollux::UnixStream::pair");
  }
  return {UnixStream(detail::IoSource(fds[0]), {}), UnixStream(detail::IoSource(fds[1]), {})};
}

Poll<UnixStream> UnixStream::ConnectOp::poll(Context& cx) {
  std::string what = "pollux::UnixStream::connect to " + printable(path_);
  if (!source_) {
    UnixAddr addr(path_, "pollux::UnixStream::connect");
    source_.emplace(open_unix(SOCK_STREAM, what));
    if (::connect(source_->fd(), addr.native(), addr.length) == 0) return ready(connected());
    if (errno != EINPROGRESS && errno != EAGAIN) {
      int error = errno;
      source_.reset();
      detail::throw_io_error(error, what);
    }
  }
  // In progress (a full backlog): writable says it finished, SO_ERROR how.
  Poll<detail::SysResult> result =
      source_->poll_io(cx, Interest::Write, "pollux::UnixStream::connect", [&]() -> ssize_t {
        int error = 0;
        socklen_t length = sizeof error;
        if (::getsockopt(source_->fd(), SOL_SOCKET, SO_ERROR, &error, &length) < 0) return -1;
        if (error != 0) {
          errno = error;
          return -1;
        }
        return 0;
      });
  if (result.is_pending()) return pending;
  if (result.value().error != 0) {
    source_.reset();
    detail::throw_io_error(result.value().error, what);
  }
  return ready(connected());
}

UnixStream UnixStream::ConnectOp::connected() {
  // A socket that waited on epoll for its connection is released from it,
  // so that the stream can still choose the ring at its first operation.
  if (source_->is_registered() && detail::io_context().ring != nullptr) {
    return UnixStream(detail::IoSource(source_->release()), path_);
  }
  return UnixStream(std::move(*source_), path_);
}

// Inline: every poll_* below is one call to the socket and this.
inline Poll<std::size_t> UnixStream::count(Poll<detail::SysResult> result, const char* operation,
                                           const char* preposition) const {
  return detail::to_count(result, [&](int error) {
    detail::throw_stream_error(error, "pollux::UnixStream", operation, preposition, printable(peer_));
  });
}

Poll<std::size_t> UnixStream::poll_read(Context& cx, std::span<std::byte> buffer) {
  return count(socket_.poll_read(cx, buffer, "pollux::UnixStream::read"), "read", "from");
}

Poll<std::size_t> UnixStream::poll_write(Context& cx, std::span<const std::byte> bytes) {
  return count(socket_.poll_write(cx, {&bytes, 1}, "pollux::UnixStream::write"), "write", "to");
}

Poll<void> UnixStream::poll_read_ready(Context& cx) {
  if (count(socket_.poll_ready(cx, Interest::Read, "pollux::UnixStream::readable"), "readable", "from").is_pending()) {
    return pending;
  }
  return ready();
}

Poll<void> UnixStream::poll_write_ready(Context& cx) {
  if (count(socket_.poll_ready(cx, Interest::Write, "pollux::UnixStream::writable"), "writable", "to").is_pending()) {
    return pending;
  }
  return ready();
}

Poll<void> UnixStream::poll_flush(Context& cx) {
  if (count(socket_.poll_flush(cx), "flush", "to").is_pending()) return pending;
  return ready();
}

Poll<void> UnixStream::poll_shutdown(Context& cx) {
  if (poll_flush(cx).is_pending()) return pending;
  shutdown(Shutdown::Write);
  return ready();
}

void UnixStream::shutdown(Shutdown how) {
  int native = how == Shutdown::Read ? SHUT_RD : how == Shutdown::Write ? SHUT_WR : SHUT_RDWR;
  detail::SysResult result = socket_.shutdown(native);
  if (result.error != 0) detail::throw_io_error(result.error, "pollux::UnixStream::shutdown");
}

// UnixListener

UnixListener UnixListener::bind(std::string_view path, int backlog) {
  std::string what = "pollux::UnixListener::bind to " + printable(path);
  UnixAddr addr(path, "pollux::UnixListener::bind");
  detail::IoSource source(open_unix(SOCK_STREAM, what));
  if (::bind(source.fd(), addr.native(), addr.length) < 0) detail::throw_io_error(errno, what);
  if (::listen(source.fd(), backlog) < 0) detail::throw_io_error(errno, what + ": listen");
  return UnixListener(std::move(source), std::string(path));
}

Poll<UnixStream> UnixListener::poll_accept(Context& cx) {
  sockaddr_un peer{};
  socklen_t length = 0;
  for (;;) {
    Poll<detail::SysResult> result =
        source_.poll_io(cx, Interest::Read, "pollux::UnixListener::accept", [&]() -> ssize_t {
          length = sizeof peer;
          return ::accept4(source_.fd(), reinterpret_cast<sockaddr*>(&peer), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
        });
    if (result.is_pending()) return pending;
    int error = result.value().error;
    if (error == ECONNABORTED) continue;
    if (error != 0) detail::throw_io_error(error, "pollux::UnixListener::accept on " + printable(path_));
    return ready(UnixStream(detail::IoSource(static_cast<int>(result.value().value)), path_of(peer, length)));
  }
}

// UnixDatagram

UnixDatagram UnixDatagram::bind(std::string_view path) {
  std::string what = "pollux::UnixDatagram::bind to " + printable(path);
  UnixAddr addr(path, "pollux::UnixDatagram::bind");
  detail::IoSource source(open_unix(SOCK_DGRAM, what));
  if (::bind(source.fd(), addr.native(), addr.length) < 0) detail::throw_io_error(errno, what);
  return UnixDatagram(std::move(source), std::string(path));
}

UnixDatagram UnixDatagram::unbound() {
  return UnixDatagram(detail::IoSource(open_unix(SOCK_DGRAM, "pollux::UnixDatagram::unbound")), {});
}

std::pair<UnixDatagram, UnixDatagram> UnixDatagram::pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) < 0) {
    detail::throw_io_error(errno, "pollux::UnixDatagram::pair");
  }
  return {UnixDatagram(detail::IoSource(fds[0]), {}), UnixDatagram(detail::IoSource(fds[1]), {})};
}

void UnixDatagram::connect(std::string_view path) {
  UnixAddr addr(path, "pollux::UnixDatagram::connect");
  if (::connect(source_.fd(), addr.native(), addr.length) < 0) {
    detail::throw_io_error(errno, "pollux::UnixDatagram::connect to " + printable(path));
  }
}

Poll<std::size_t> UnixDatagram::poll_send_to(Context& cx, std::span<const std::byte> bytes,
                                             const std::optional<std::string>& path) {
  std::optional<UnixAddr> to;
  if (path) to.emplace(*path, "pollux::UnixDatagram::send_to");
  Poll<detail::SysResult> result = source_.poll_io(cx, Interest::Write, "pollux::UnixDatagram::send", [&] {
    return detail::sys_sendto(source_.fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL, to ? to->native() : nullptr,
                              to ? to->length : 0);
  });
  if (result.is_pending()) return pending;
  if (result.value().error != 0) {
    detail::throw_io_error(result.value().error,
                           "pollux::UnixDatagram::send to " + (path ? printable(*path) : std::string("its peer")));
  }
  return ready(static_cast<std::size_t>(result.value().value));
}

Poll<std::pair<std::size_t, std::string>> UnixDatagram::poll_recv_from(Context& cx, std::span<std::byte> buffer) {
  sockaddr_un from{};
  socklen_t length = 0;
  Poll<detail::SysResult> result = source_.poll_io(cx, Interest::Read, "pollux::UnixDatagram::recv", [&]() -> ssize_t {
    length = sizeof from;
    return detail::sys_recvfrom(source_.fd(), buffer.data(), buffer.size(), 0, reinterpret_cast<sockaddr*>(&from),
                                &length);
  });
  if (result.is_pending()) return pending;
  if (result.value().error != 0)
    detail::throw_io_error(result.value().error, "pollux::UnixDatagram::recv on " + printable(path_));
  return ready(
      std::pair<std::size_t, std::string>(static_cast<std::size_t>(result.value().value), path_of(from, length)));
}

}  // namespace pollux
