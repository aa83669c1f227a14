// What the socket sources share: making a socket and asking its address.
#pragma once

#include <string>

#include "pollux/io/socket_addr.hpp"

namespace pollux::detail {

// socket(2), non-blocking and close-on-exec. Throws std::system_error
// "<operation> <addr>: socket: ..." (the message is built only then: a
// connect that succeeds allocates nothing).
int open_socket(const SocketAddr& addr, int type, const char* operation);

// getsockname(2).
SocketAddr local_addr_of(int fd);

}  // namespace pollux::detail
