// lookup_host("name:port"): a future of the socket addresses a host name
// has (tokio's net::lookup_host), resolved by getaddrinfo on the runtime's
// blocking pool, since getaddrinfo blocks; the lookup starts on the first
// poll. A numeric address needs no lookup and is answered at once. Errors are std::system_error whose
// message names the host ("pollux::lookup_host(\"nowhere.invalid:80\"):
// Name or service not known"); "host:port" without a numeric port is a
// std::invalid_argument at once, and a lookup that the runtime's shutdown
// dropped before it ran throws std::system_error (operation_canceled).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <string_view>
#include <vector>

#include "pollux/core/box_future.hpp"
#include "pollux/io/socket_addr.hpp"

namespace pollux {

namespace detail {
/// The resolver every runtime installs for TcpStream::connect (see
/// io/detail/resolve.hpp): getaddrinfo on the blocking pool.
BoxFuture<std::vector<SocketAddr>> resolve_on_blocking_pool(std::string host, std::uint16_t port);
}  // namespace detail

/// The addresses of `host_port` ("localhost:8080", "[::1]:8080").
BoxFuture<std::vector<SocketAddr>> lookup_host(std::string_view host_port);

}  // namespace pollux
