// The name resolution TcpStream::connect needs for a host name: getaddrinfo
// on the runtime's blocking pool (it blocks), as a boxed future. Declared
// here for the socket layer, defined with the blocking pool (runtime/), so
// the headers' arrows still point one way.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pollux/core/box_future.hpp"
#include "pollux/io/socket_addr.hpp"

namespace pollux::detail {

// "host:port" or "[v6]:port" split into its host and port; throws
// std::invalid_argument naming `text` for anything else.
std::pair<std::string, std::uint16_t> split_host_port(std::string_view text, const char* what);

// A future of the addresses of host:port (never empty: no address is a
// std::system_error naming the host). Throws NoRuntime outside a runtime.
BoxFuture<std::vector<SocketAddr>> resolve(std::string host, std::uint16_t port);

}  // namespace pollux::detail
