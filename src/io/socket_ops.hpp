// What the socket sources share: making a socket and asking its address.
#pragma once

#include <string>

#include "pollux/io/socket_addr.hpp"

namespace pollux::detail {

// socket(2), non-blocking and close-on-exec; throws naming `what`.
int open_socket(const SocketAddr& addr, int type, const std::string& what);

// getsockname(2).
SocketAddr local_addr_of(int fd);

}  // namespace pollux::detail
