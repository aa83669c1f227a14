// SocketAddr: parsing, printing and comparing.
#include <doctest/doctest.h>

#include <sstream>
#include <stdexcept>
#include <string>

#include <pollux/pollux.hpp>

using pollux::SocketAddr;

TEST_CASE("an IPv4 address and port parse and print back") {
  SocketAddr addr = SocketAddr::parse("127.0.0.1:8080");
  CHECK(addr.is_ipv4());
  CHECK(addr.port() == 8080);
  CHECK(addr.ip() == "127.0.0.1");
  CHECK(addr.to_string() == "127.0.0.1:8080");
}

TEST_CASE("an IPv6 address in brackets and port parse and print back") {
  SocketAddr addr = SocketAddr::parse("[::1]:8080");
  CHECK(addr.is_ipv6());
  CHECK(addr.port() == 8080);
  CHECK(addr.ip() == "::1");
  CHECK(addr.to_string() == "[::1]:8080");
  CHECK(SocketAddr::parse("[2001:db8::7]:65535").to_string() == "[2001:db8::7]:65535");
}

TEST_CASE("addresses compare by family, address and port") {
  CHECK(SocketAddr::parse("10.0.0.1:1") == SocketAddr::parse("10.0.0.1:1"));
  CHECK_FALSE(SocketAddr::parse("10.0.0.1:1") == SocketAddr::parse("10.0.0.1:2"));
  CHECK_FALSE(SocketAddr::parse("10.0.0.1:1") == SocketAddr::parse("10.0.0.2:1"));
  CHECK_FALSE(SocketAddr::parse("[::1]:1") == SocketAddr::parse("127.0.0.1:1"));
}

TEST_CASE("a bad address string throws invalid_argument quoting it") {
  for (const char* bad : {"", "localhost:80", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
                          "127.0.0.1:80x", "256.0.0.1:80", "::1:80", "[::1]80", "[::1:80", "[nonsense]:80"}) {
    CAPTURE(bad);
    try {
      (void)SocketAddr::parse(bad);
      FAIL("parsed");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find("\"" + std::string(bad) + "\"") != std::string::npos);
    }
  }
}

TEST_CASE("an address prints to a stream as to_string") {
  std::ostringstream out;
  out << SocketAddr::parse("[::ffff:1.2.3.4]:9");
  CHECK(out.str() == "[::ffff:1.2.3.4]:9");
}
