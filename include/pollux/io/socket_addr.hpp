// SocketAddr: an IPv4 or IPv6 address and a port, the value every socket
// call takes and returns. parse() reads "127.0.0.1:8080" and "[::1]:8080";
// a string that is neither throws std::invalid_argument quoting it.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

namespace pollux {

/// An IPv4 or IPv6 address and a port, the value every socket call takes and returns.
class SocketAddr {
 public:
  // 0.0.0.0:0
  SocketAddr() noexcept;

  /// "a.b.c.d:port" or "[ipv6]:port". Throws std::invalid_argument.
  static SocketAddr parse(std::string_view text);
  /// From what the kernel filled in (accept, recvfrom, getsockname).
  /// Throws std::invalid_argument for a family other than AF_INET/AF_INET6.
  static SocketAddr from_native(const sockaddr* addr, socklen_t length);

  /// True for an IPv4 address.
  bool is_ipv4() const noexcept { return storage_.any.sa_family == AF_INET; }
  /// True for an IPv6 address.
  bool is_ipv6() const noexcept { return storage_.any.sa_family == AF_INET6; }
  /// AF_INET or AF_INET6.
  int family() const noexcept { return storage_.any.sa_family; }
  /// The port, in host byte order.
  std::uint16_t port() const noexcept;
  /// The address without the port: "127.0.0.1", "::1".
  std::string ip() const;
  /// "127.0.0.1:8080", "[::1]:8080": what parse() reads back.
  std::string to_string() const;

  /// For system calls: the sockaddr.
  const sockaddr* native() const noexcept { return &storage_.any; }
  /// For system calls: the sockaddr's length.
  socklen_t native_length() const noexcept { return is_ipv6() ? sizeof(sockaddr_in6) : sizeof(sockaddr_in); }

  friend bool operator==(const SocketAddr& a, const SocketAddr& b) noexcept;

 private:
  union Storage {
    sockaddr any;
    sockaddr_in v4;
    sockaddr_in6 v6;
  } storage_;
};

/// Writes addr.to_string().
std::ostream& operator<<(std::ostream& out, const SocketAddr& addr);

}  // namespace pollux
