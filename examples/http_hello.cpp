// A minimal HTTP/1.1 keep-alive server: every `GET <path> HTTP/1.x` gets
// 200 and "Hello, world!". One task per connection, a hand-written future
// (http_connection.hpp) that reads until a blank line ends a request head,
// answers every request found in one read with one write (pipelining
// works), and on a request it does not understand, or a head over 8 KiB,
// answers 400 and closes that connection; the server keeps serving the
// others.
//
//   http_hello [addr=127.0.0.1:7000] [ct|mt|N=ct] [max_secs=forever] [idle_secs=60] [grace_secs=5]
//
// Try it with `curl http://127.0.0.1:7000/` or load it with wrk.
#include <pollux/pollux.hpp>

#include <string>
#include <string_view>

#include "http_connection.hpp"
#include "http_request.hpp"
#include "server.hpp"

namespace {

// Every GET gets 200 and "Hello, world!".
struct Hello {
  void operator()(std::string_view, std::string& out) const { out.append(http::kHello); }
};

// Each connection under its idle limit, with the same limit on each
// request head from its first byte and on each write.
struct MakeConnection {
  auto operator()(pollux::TcpStream stream, const ServerOptions& options) const {
    return pollux::idle_timeout(options.idle, HttpConnection<Hello>(std::move(stream), Hello{}, options.idle));
  }
};

}  // namespace

int main(int argc, char** argv) { return serve<void>("http_hello", "http://", argc, argv, MakeConnection{}); }
