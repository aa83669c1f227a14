// http_hello over TLS: every `GET <path> HTTP/1.x` gets 200 and "Hello,
// world!", on a TLS stream (pollux-tls) instead of plain TCP. The same
// connection future as http_hello serves it (http_connection.hpp, over
// TlsStream<TcpStream>), after a handshake that must be done within the
// idle limit (tls_connection.hpp); a closing connection sends close_notify.
//
//   https_hello CERT.pem KEY.pem [addr=127.0.0.1:7000] [ct|mt|N=ct] [max_secs=forever] [idle_secs=60] [grace_secs=5]
//
// Try it with `curl --cacert CERT.pem https://localhost:7000/`.
#include <pollux/pollux.hpp>
#include <pollux/tls.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "http_connection.hpp"
#include "http_request.hpp"
#include "server.hpp"
#include "tls_connection.hpp"

namespace {

// Every GET gets 200 and "Hello, world!".
struct Hello {
  void operator()(std::string_view, std::string& out) const { out.append(http::kHello); }
};

// The HTTP connection over the TLS stream, with http_hello's deadlines.
struct ServeHttp {
  pollux::Duration limit;
  auto operator()(pollux::tls::TlsStream<pollux::TcpStream> stream) const {
    return HttpConnection<Hello, pollux::tls::TlsStream<pollux::TcpStream>>(std::move(stream), Hello{}, limit);
  }
};

struct MakeConnection {
  const pollux::tls::TlsAcceptor* acceptor;
  auto operator()(pollux::TcpStream stream, const ServerOptions& options) const {
    return pollux::idle_timeout(
        options.idle, TlsConnection<ServeHttp>(*acceptor, std::move(stream), ServeHttp{options.idle}, options.idle));
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: https_hello CERT.pem KEY.pem [addr] [ct|mt|N] [max_secs] [idle_secs] [grace_secs]\n");
    return 2;
  }
  try {
    pollux::tls::TlsAcceptor acceptor = acceptor_from_files(argv[1], argv[2]);
    // serve() reads its arguments from argv[1] on: the address comes third here.
    return serve<void>("https_hello", "https://", argc - 2, argv + 2, MakeConnection{&acceptor});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "https_hello: %s\n", e.what());
    return 1;
  }
}
