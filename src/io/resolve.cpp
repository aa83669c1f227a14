// Host names for TcpStream::connect: parsing host:port here, resolving
// through the resolver the runtime layer installs (see resolve.hpp).
#include "pollux/io/detail/resolve.hpp"

#include <charconv>
#include <stdexcept>
#include <string>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/no_runtime.hpp"

namespace pollux::detail {

namespace {
// Written by every runtime's construction with the same value; read by
// each resolve. Relaxed: the function it points to is code, not data.
constinit Atomic<Resolver> installed_resolver{nullptr};
}  // namespace

void install_resolver(Resolver resolver) noexcept { installed_resolver.store(resolver, std::memory_order_relaxed); }

std::pair<std::string, std::uint16_t> split_host_port(std::string_view text, const char* what) {
  auto bad = [&] {
    return std::invalid_argument(std::string(what) + ": \"" + std::string(text) + "\" is not host:port");
  };
  std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) throw bad();
  std::string_view host = text.substr(0, colon), port_text = text.substr(colon + 1);
  if (host.front() == '[') {
    if (host.back() != ']') throw bad();
    host = host.substr(1, host.size() - 2);
  }
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535 || host.empty()) throw bad();
  return {std::string(host), static_cast<std::uint16_t>(port)};
}

BoxFuture<std::vector<SocketAddr>> resolve(std::string host, std::uint16_t port, const char* what) {
  Resolver resolver = installed_resolver.load(std::memory_order_relaxed);
  if (resolver == nullptr) throw_no_runtime(what);
  return resolver(std::move(host), port);
}

}  // namespace pollux::detail
