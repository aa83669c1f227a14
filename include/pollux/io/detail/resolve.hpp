// The name resolution TcpStream::connect needs for a host name. Resolving
// blocks (getaddrinfo), so it runs on the runtime's blocking pool, which
// this layer cannot name: the runtime layer installs the resolver when it
// builds a runtime, and io/ calls it through this handle.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pollux/core/box_future.hpp"
#include "pollux/io/socket_addr.hpp"

namespace pollux::detail {

/// A future of the addresses of host:port, never empty (no address is a
/// std::system_error naming the host); throws NoRuntime outside a runtime.
using Resolver = BoxFuture<std::vector<SocketAddr>> (*)(std::string host, std::uint16_t port);

/// Makes `resolver` the one resolve() calls, for the whole process (every
/// runtime installs the same one; installing again changes nothing).
void install_resolver(Resolver resolver) noexcept;

/// "host:port" or "[v6]:port" split into its host and port; throws
/// std::invalid_argument naming `what` and `text` for anything else.
std::pair<std::string, std::uint16_t> split_host_port(std::string_view text, const char* what);

/// Resolves through the installed resolver; throws NoRuntime naming `what`
/// when no runtime was ever built (none installed one).
BoxFuture<std::vector<SocketAddr>> resolve(std::string host, std::uint16_t port, const char* what);

}  // namespace pollux::detail
