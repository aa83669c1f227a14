// TcpStream and TcpListener: the system calls behind their futures.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <tuple>

#include "pollux/io/tcp_listener.hpp"
#include "pollux/io/tcp_stream.hpp"
#include "pollux/core/coop.hpp"
#include "pollux/io/detail/io_context.hpp"
#include "stream_socket_io.hpp"
#include "socket_ops.hpp"

namespace pollux {

namespace detail {

int open_socket(const SocketAddr& addr, int type, const char* operation) {
  int fd = ::socket(addr.family(), type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw_io_error(errno, std::string(operation) + " " + addr.to_string() + ": socket");
  return fd;
}

SocketAddr local_addr_of(int fd) {
  sockaddr_storage storage{};
  socklen_t length = sizeof storage;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length) < 0) {
    throw_io_error(errno, "pollux: getsockname");
  }
  return SocketAddr::from_native(reinterpret_cast<sockaddr*>(&storage), length);
}

}  // namespace detail

// TcpStream

void TcpStream::fail(int error, const char* operation, const char* preposition) const {
  detail::throw_stream_error(error, "pollux::TcpStream", operation, preposition, peer_.to_string());
}

namespace {
const std::span<const std::byte>* one(const std::span<const std::byte>& bytes) noexcept { return &bytes; }
}  // namespace

// Every operation goes to the socket's backend (stream_socket.cpp); what is
// left here is naming the failures.

// Inline: every poll_* below is one call to the socket and this.
inline Poll<std::size_t> TcpStream::count(Poll<detail::SysResult> result, const char* operation,
                                          const char* preposition) const {
  return detail::to_count(result, [&](int error) { fail(error, operation, preposition); });
}

inline Result<std::size_t, WouldBlock> TcpStream::count_now(detail::SysResult result, const char* operation,
                                                            const char* preposition) const {
  if (result.error == EAGAIN) return WouldBlock{};
  if (result.error != 0) fail(result.error, operation, preposition);
  return static_cast<std::size_t>(result.value);
}

int TcpStream::native_handle() const noexcept { return socket_.fd(); }

void TcpStream::abandon(Interest interest) noexcept { socket_.abandon(interest); }

Poll<std::size_t> TcpStream::poll_read(Context& cx, std::span<std::byte> buffer) {
  return count(socket_.poll_read(cx, buffer, "pollux::TcpStream::read"), "read", "from");
}

Poll<std::size_t> TcpStream::poll_peek(Context& cx, std::span<std::byte> buffer) {
  return count(socket_.poll_read(cx, buffer, "pollux::TcpStream::peek", true), "peek", "from");
}

Poll<std::size_t> TcpStream::poll_write(Context& cx, std::span<const std::byte> bytes) {
  return count(socket_.poll_write(cx, {one(bytes), 1}, "pollux::TcpStream::write"), "write", "to");
}

Poll<std::size_t> TcpStream::poll_write_vectored(Context& cx, std::span<const std::span<const std::byte>> buffers) {
  return count(socket_.poll_write(cx, buffers, "pollux::TcpStream::write_vectored"), "write_vectored", "to");
}

Poll<void> TcpStream::poll_read_ready(Context& cx) {
  if (count(socket_.poll_ready(cx, Interest::Read, "pollux::TcpStream::readable"), "readable", "from").is_pending()) {
    return pending;
  }
  return ready();
}

Poll<void> TcpStream::poll_write_ready(Context& cx) {
  if (count(socket_.poll_ready(cx, Interest::Write, "pollux::TcpStream::writable"), "writable", "to").is_pending()) {
    return pending;
  }
  return ready();
}

Result<std::size_t, WouldBlock> TcpStream::try_read(std::span<std::byte> buffer) {
  return count_now(socket_.try_read(buffer, "pollux::TcpStream::try_read"), "read", "from");
}

Result<std::size_t, WouldBlock> TcpStream::try_write(std::span<const std::byte> bytes) {
  return count_now(socket_.try_write({one(bytes), 1}, "pollux::TcpStream::try_write"), "write", "to");
}

Poll<void> TcpStream::poll_flush(Context& cx) {
  if (count(socket_.poll_flush(cx), "flush", "to").is_pending()) return pending;
  return ready();
}

Poll<void> TcpStream::poll_shutdown(Context& cx) {
  if (poll_flush(cx).is_pending()) return pending;
  shutdown(Shutdown::Write);
  return ready();
}

void TcpStream::shutdown(Shutdown how) {
  int native = how == Shutdown::Read ? SHUT_RD : how == Shutdown::Write ? SHUT_WR : SHUT_RDWR;
  detail::SysResult result = socket_.shutdown(native);
  if (result.error != 0) fail(result.error, "shutdown", "of the connection to");
}

void TcpStream::set_nodelay(bool on) {
  int value = on ? 1 : 0;
  if (::setsockopt(native_handle(), IPPROTO_TCP, TCP_NODELAY, &value, sizeof value) < 0) {
    fail(errno, "set_nodelay", "on the connection to");
  }
}

bool TcpStream::nodelay() const {
  int value = 0;
  socklen_t length = sizeof value;
  if (::getsockopt(native_handle(), IPPROTO_TCP, TCP_NODELAY, &value, &length) < 0) {
    fail(errno, "nodelay", "on the connection to");
  }
  return value != 0;
}

SocketAddr TcpStream::local_addr() const { return detail::local_addr_of(native_handle()); }

// TcpStream::Connect

void TcpStream::Connect::fail(int error) {
  state_ = State::Done;
  source_.close();
  detail::throw_io_error(error, "pollux::TcpStream::connect to " + addr_.to_string());
}

Poll<TcpStream> TcpStream::Connect::poll(Context& cx) {
  switch (state_) {
    case State::Start: {
      int fd = detail::open_socket(addr_, SOCK_STREAM, "pollux::TcpStream::connect to");
      source_ = detail::IoSource(fd);
      if (::connect(fd, addr_.native(), addr_.native_length()) == 0) {
        state_ = State::Done;
        return ready(TcpStream(std::move(source_), addr_));
      }
      if (errno != EINPROGRESS) fail(errno);
      state_ = State::Connecting;
      [[fallthrough]];
    }
    case State::Connecting: {
      // Writable means connect() finished: SO_ERROR says how. A socket may
      // be reported writable before that (its readiness starts set), so a
      // socket without a peer yet waits for the next edge.
      Poll<detail::SysResult> result =
          source_.poll_io(cx, Interest::Write, "pollux::TcpStream::connect", [&]() -> ssize_t {
            int error = 0;
            socklen_t length = sizeof error;
            if (::getsockopt(source_.fd(), SOL_SOCKET, SO_ERROR, &error, &length) < 0) return -1;
            if (error != 0) {
              errno = error;
              return -1;
            }
            sockaddr_storage peer{};
            socklen_t peer_length = sizeof peer;
            if (::getpeername(source_.fd(), reinterpret_cast<sockaddr*>(&peer), &peer_length) < 0) {
              if (errno == ENOTCONN) errno = EAGAIN;
              return -1;
            }
            return 0;
          });
      if (result.is_pending()) return pending;
      if (result.value().error != 0) fail(result.value().error);
      state_ = State::Done;
      // Connected: on the io_uring backend the stream moves to the ring at
      // its first poll, which it does only from an unregistered fd.
      if (detail::io_context().ring != nullptr) return ready(TcpStream(detail::IoSource(source_.release()), addr_));
      return ready(TcpStream(std::move(source_), addr_));
    }
    case State::Done:
      break;
  }
  detail::polled_after_ready<Connect>();
}

// TcpStream::ConnectHost

TcpStream::ConnectHost::ConnectHost(std::string_view text) {
  try {
    addrs_.push_back(SocketAddr::parse(text));  // numeric: nothing to resolve
  } catch (const std::invalid_argument&) {
    std::tie(host_, port_) = detail::split_host_port(text, "pollux::TcpStream::connect");
  }
}

Poll<TcpStream> TcpStream::ConnectHost::poll(Context& cx) {
  switch (state_) {
    case State::Start:
      if (addrs_.empty()) {
        resolving_.emplace(
            detail::resolve(host_, port_, "pollux::TcpStream::connect"));  // here: it needs the runtime (rule 8)
        state_ = State::Resolving;
      } else {
        state_ = State::Connecting;
        return poll(cx);
      }
      [[fallthrough]];
    case State::Resolving: {
      Poll<std::vector<SocketAddr>> resolved = [&] {
        try {
          return resolving_->poll(cx);
        } catch (...) {
          state_ = State::Done;
          throw;
        }
      }();
      if (resolved.is_pending()) return pending;
      addrs_ = std::move(resolved).value();
      resolving_.reset();
      state_ = State::Connecting;
      [[fallthrough]];
    }
    case State::Connecting:
      for (;;) {
        if (!connecting_) {
          if (next_ == addrs_.size()) {
            state_ = State::Done;
            std::rethrow_exception(last_error_);
          }
          connecting_.emplace(addrs_[next_++]);
        }
        try {
          Poll<TcpStream> connected = connecting_->poll(cx);
          if (connected.is_pending()) return pending;
          state_ = State::Done;
          return connected;
        } catch (const std::system_error&) {
          last_error_ = std::current_exception();  // try the next address
          connecting_.reset();
        }
      }
    case State::Done:
      break;
  }
  detail::polled_after_ready<ConnectHost>();
}

// TcpListener

TcpListener TcpListener::bind(const SocketAddr& addr, int backlog) {
  detail::IoSource source(detail::open_socket(addr, SOCK_STREAM, "pollux::TcpListener::bind to"));
  std::string what = "pollux::TcpListener::bind to " + addr.to_string();
  int one = 1;
  if (::setsockopt(source.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0) {
    detail::throw_io_error(errno, what + ": SO_REUSEADDR");
  }
  if (::bind(source.fd(), addr.native(), addr.native_length()) < 0) detail::throw_io_error(errno, what);
  if (::listen(source.fd(), backlog) < 0) detail::throw_io_error(errno, what + ": listen");
  SocketAddr local = detail::local_addr_of(source.fd());
  return TcpListener(std::move(source), local);
}

Poll<std::pair<TcpStream, SocketAddr>> TcpListener::poll_accept(Context& cx) {
  sockaddr_storage peer{};
  socklen_t length = 0;
  for (;;) {
    Poll<detail::SysResult> result =
        source_.poll_io(cx, Interest::Read, "pollux::TcpListener::accept", [&]() -> ssize_t {
          length = sizeof peer;
          return ::accept4(source_.fd(), reinterpret_cast<sockaddr*>(&peer), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
        });
    if (result.is_pending()) return pending;
    int error = result.value().error;
    // The connection went away while queued: not the listener's failure.
    if (error == ECONNABORTED) continue;
    if (error != 0) detail::throw_io_error(error, "pollux::TcpListener::accept on " + local_.to_string());
    SocketAddr peer_addr = SocketAddr::from_native(reinterpret_cast<sockaddr*>(&peer), length);
    detail::IoSource stream(static_cast<int>(result.value().value));
    return ready(std::pair<TcpStream, SocketAddr>(TcpStream(std::move(stream), peer_addr), peer_addr));
  }
}

}  // namespace pollux
