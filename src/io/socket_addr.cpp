// Parsing and printing socket addresses with inet_pton / inet_ntop.
#include "pollux/io/socket_addr.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>
#include <ostream>
#include <stdexcept>

namespace pollux {

namespace {

[[noreturn]] void bad_address(std::string_view text, const char* why) {
  throw std::invalid_argument("pollux::SocketAddr::parse: \"" + std::string(text) + "\" is not an address: " + why
                              + " (expected \"127.0.0.1:8080\" or \"[::1]:8080\")");
}

std::uint16_t parse_port(std::string_view text, std::string_view port) {
  unsigned value = 0;
  auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || error != std::errc() || end != port.data() + port.size() || value > 65535) {
    bad_address(text, "the port must be a number from 0 to 65535");
  }
  return static_cast<std::uint16_t>(value);
}

}  // namespace

SocketAddr::SocketAddr() noexcept {
  std::memset(&storage_, 0, sizeof storage_);
  storage_.v4.sin_family = AF_INET;
}

SocketAddr SocketAddr::parse(std::string_view text) {
  SocketAddr addr;
  std::memset(&addr.storage_, 0, sizeof addr.storage_);
  std::string host;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    std::size_t close = text.find(']');
    if (close == std::string_view::npos) bad_address(text, "no ']' after the IPv6 address");
    if (close + 1 >= text.size() || text[close + 1] != ':') bad_address(text, "no ':port' after ']'");
    host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
    addr.storage_.v6.sin6_family = AF_INET6;
    if (inet_pton(AF_INET6, host.c_str(), &addr.storage_.v6.sin6_addr) != 1) {
      bad_address(text, "not an IPv6 address between the brackets");
    }
    addr.storage_.v6.sin6_port = htons(parse_port(text, port));
    return addr;
  }
  std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) bad_address(text, "no ':port'");
  host = std::string(text.substr(0, colon));
  if (host.find(':') != std::string::npos) bad_address(text, "an IPv6 address needs brackets");
  port = text.substr(colon + 1);
  addr.storage_.v4.sin_family = AF_INET;
  if (inet_pton(AF_INET, host.c_str(), &addr.storage_.v4.sin_addr) != 1) bad_address(text, "not an IPv4 address");
  addr.storage_.v4.sin_port = htons(parse_port(text, port));
  return addr;
}

SocketAddr SocketAddr::from_native(const sockaddr* native, socklen_t length) {
  SocketAddr addr;
  std::memset(&addr.storage_, 0, sizeof addr.storage_);
  if (native->sa_family == AF_INET && length >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    std::memcpy(&addr.storage_.v4, native, sizeof(sockaddr_in));
  } else if (native->sa_family == AF_INET6 && length >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    std::memcpy(&addr.storage_.v6, native, sizeof(sockaddr_in6));
  } else {
    throw std::invalid_argument("pollux::SocketAddr: address family " + std::to_string(native->sa_family)
                                + " is neither IPv4 nor IPv6");
  }
  return addr;
}

std::uint16_t SocketAddr::port() const noexcept {
  return ntohs(is_ipv6() ? storage_.v6.sin6_port : storage_.v4.sin_port);
}

std::string SocketAddr::ip() const {
  char buffer[INET6_ADDRSTRLEN] = {};
  if (is_ipv6()) {
    inet_ntop(AF_INET6, &storage_.v6.sin6_addr, buffer, sizeof buffer);
  } else {
    inet_ntop(AF_INET, &storage_.v4.sin_addr, buffer, sizeof buffer);
  }
  return buffer;
}

std::string SocketAddr::to_string() const {
  // Appended, not `"[" + ip()`: GCC 12's -Wrestrict misreads that insert
  // at the front of a temporary (a false positive, in release builds).
  std::string out;
  if (is_ipv6()) out += '[';
  out += ip();
  if (is_ipv6()) out += ']';
  out += ':';
  out += std::to_string(port());
  return out;
}

bool operator==(const SocketAddr& a, const SocketAddr& b) noexcept {
  if (a.family() != b.family()) return false;
  if (a.is_ipv6()) {
    return a.storage_.v6.sin6_port == b.storage_.v6.sin6_port
           && std::memcmp(&a.storage_.v6.sin6_addr, &b.storage_.v6.sin6_addr, sizeof(in6_addr)) == 0;
  }
  return a.storage_.v4.sin_port == b.storage_.v4.sin_port
         && a.storage_.v4.sin_addr.s_addr == b.storage_.v4.sin_addr.s_addr;
}

std::ostream& operator<<(std::ostream& out, const SocketAddr& addr) { return out << addr.to_string(); }

}  // namespace pollux
