// Fuzzes SocketAddr::parse, which reads addresses a peer or a user types:
// any bytes either parse, or throw std::invalid_argument quoting them, and
// an address that parses prints back to text that parses to the same one.
#include <pollux/io/socket_addr.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  pollux::SocketAddr addr;
  try {
    addr = pollux::SocketAddr::parse(text);
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).empty()) std::abort();  // a bad address always gets a message
    return 0;
  }
  if (pollux::SocketAddr::parse(addr.to_string()) != addr) std::abort();  // round trip
  return 0;
}
