// UdpSocket: the system calls behind its futures.
#include <sys/socket.h>

#include <cerrno>
#include <string>

#include "pollux/io/udp_socket.hpp"
#include "socket_ops.hpp"

namespace pollux {

UdpSocket UdpSocket::bind(const SocketAddr& addr) {
  detail::IoSource source(detail::open_socket(addr, SOCK_DGRAM, "pollux::UdpSocket::bind to"));
  std::string what = "pollux::UdpSocket::bind to " + addr.to_string();
  if (::bind(source.fd(), addr.native(), addr.native_length()) < 0) detail::throw_io_error(errno, what);
  SocketAddr local = detail::local_addr_of(source.fd());
  return UdpSocket(std::move(source), local);
}

Poll<std::size_t> UdpSocket::poll_send_to(Context& cx, std::span<const std::byte> bytes, const SocketAddr& to) {
  Poll<detail::SysResult> result = source_.poll_io(cx, Interest::Write, "pollux::UdpSocket::send_to", [&] {
    return detail::sys_sendto(source_.fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL, to.native(), to.native_length());
  });
  if (result.is_pending()) return pending;
  if (result.value().error != 0) {
    detail::throw_io_error(result.value().error,
                           "pollux::UdpSocket::send_to " + to.to_string() + " from " + local_.to_string());
  }
  return ready(static_cast<std::size_t>(result.value().value));
}

Poll<std::pair<std::size_t, SocketAddr>> UdpSocket::poll_recv_from(Context& cx, std::span<std::byte> buffer) {
  sockaddr_storage from{};
  socklen_t length = 0;
  Poll<detail::SysResult> result =
      source_.poll_io(cx, Interest::Read, "pollux::UdpSocket::recv_from", [&]() -> ssize_t {
        length = sizeof from;
        return detail::sys_recvfrom(source_.fd(), buffer.data(), buffer.size(), 0, reinterpret_cast<sockaddr*>(&from),
                                    &length);
      });
  if (result.is_pending()) return pending;
  if (result.value().error != 0) {
    detail::throw_io_error(result.value().error, "pollux::UdpSocket::recv_from on " + local_.to_string());
  }
  return ready(std::pair<std::size_t, SocketAddr>(static_cast<std::size_t>(result.value().value),
                                                  SocketAddr::from_native(reinterpret_cast<sockaddr*>(&from), length)));
}

}  // namespace pollux
