// echo_server over TLS: everything a client sends comes back, on a TLS
// stream (pollux-tls). The echo is echo_server's own future
// (echo_connection.hpp, over TlsStream<TcpStream>), after a handshake that
// must be done within the idle limit (tls_connection.hpp); each connection
// lives under the idle limit, and ends with close_notify.
//
//   tls_echo CERT.pem KEY.pem [addr=127.0.0.1:7000] [ct|mt|N=ct] [max_secs=forever] [idle_secs=60] [grace_secs=5]
//
// Try it with `openssl s_client -connect 127.0.0.1:7000 -CAfile CERT.pem`.
#include <pollux/pollux.hpp>
#include <pollux/tls.hpp>

#include <cstdio>
#include <exception>

#include "echo_connection.hpp"
#include "server.hpp"
#include "tls_connection.hpp"

namespace {

struct ServeEcho {
  auto operator()(pollux::tls::TlsStream<pollux::TcpStream> stream) const {
    return BasicEchoConnection<pollux::tls::TlsStream<pollux::TcpStream>>(std::move(stream));
  }
};

struct MakeConnection {
  const pollux::tls::TlsAcceptor* acceptor;
  auto operator()(pollux::TcpStream stream, const ServerOptions& options) const {
    return pollux::idle_timeout(options.idle,
                                TlsConnection<ServeEcho>(*acceptor, std::move(stream), ServeEcho{}, options.idle));
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: tls_echo CERT.pem KEY.pem [addr] [ct|mt|N] [max_secs] [idle_secs] [grace_secs]\n");
    return 2;
  }
  try {
    pollux::tls::TlsAcceptor acceptor = acceptor_from_files(argv[1], argv[2]);
    return serve<void>("tls_echo", "", argc - 2, argv + 2, MakeConnection{&acceptor});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tls_echo: %s\n", e.what());
    return 1;
  }
}
