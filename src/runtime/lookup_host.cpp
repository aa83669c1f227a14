// Name resolution on the blocking pool: lookup_host, and the resolver that
// every runtime installs for TcpStream::connect to a host name.
#include "pollux/runtime/lookup_host.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <stdexcept>
#include <string>
#include <system_error>

#include "pollux/future/map.hpp"
#include "pollux/future/ready.hpp"
#include "pollux/future/then.hpp"
#include "pollux/io/detail/resolve.hpp"
#include "pollux/runtime/spawn_blocking.hpp"

namespace pollux {

namespace {

// getaddrinfo's errors (EAI_*), which are not errno values.
class GaiCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "getaddrinfo"; }
  std::string message(int code) const override { return ::gai_strerror(code); }
};

const std::error_category& gai_category() {
  static const GaiCategory category;
  return category;
}

// How each error of a lookup names it: pollux::lookup_host("host:port").
std::string lookup_what(const std::string& host, std::uint16_t port) {
  return "pollux::lookup_host(\"" + host + ":" + std::to_string(port) + "\")";
}

std::vector<SocketAddr> resolve_blocking(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  std::string what = lookup_what(host, port);
  if (rc == EAI_SYSTEM) throw std::system_error(errno, std::generic_category(), what);
  if (rc != 0) throw std::system_error(rc, gai_category(), what);
  std::vector<SocketAddr> addrs;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET || a->ai_family == AF_INET6)
      addrs.push_back(SocketAddr::from_native(a->ai_addr, a->ai_addrlen));
  }
  ::freeaddrinfo(found);
  if (addrs.empty()) throw std::system_error(EAI_NONAME, gai_category(), what);
  return addrs;
}

}  // namespace

namespace detail {

BoxFuture<std::vector<SocketAddr>> resolve_on_blocking_pool(std::string host, std::uint16_t port) {
  // This future's errors are system_errors, as every socket call's are; so
  // is a lookup that the runtime's shutdown dropped before it ran.
  return BoxFuture<std::vector<SocketAddr>>(
      map(spawn_blocking([host, port] { return resolve_blocking(host, port); }),
          [host, port](Result<std::vector<SocketAddr>, Cancelled> addrs) {
            if (!addrs) {
              throw std::system_error(std::make_error_code(std::errc::operation_canceled),
                                      lookup_what(host, port) + ": the runtime shut down before the lookup ran");
            }
            return std::move(addrs).value();
          }));
}

}  // namespace detail

BoxFuture<std::vector<SocketAddr>> lookup_host(std::string_view host_port) {
  try {
    SocketAddr numeric = SocketAddr::parse(host_port);  // no lookup needed
    return BoxFuture<std::vector<SocketAddr>>(ready_future(std::vector<SocketAddr>{numeric}));
  } catch (const std::invalid_argument&) {
  }
  // The lookup starts on the first poll, inside the runtime (futures are lazy).
  return BoxFuture<std::vector<SocketAddr>>(ready_future(detail::split_host_port(host_port, "pollux::lookup_host"))
                                            | then([](std::pair<std::string, std::uint16_t> host) {
                                                return detail::resolve_on_blocking_pool(std::move(host.first),
                                                                                        host.second);
                                              }));
}

}  // namespace pollux
