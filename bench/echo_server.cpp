// echo_server [ct|mt] [PORT=7000] [MAX_SECS=600]
// TCP echo server on 127.0.0.1:PORT, the peers' workload and nothing more
// (bare_server.hpp): one task per connection echoing whatever it reads,
// the connection of examples/echo_server.cpp without that example's idle
// deadline, connection count and graceful shutdown. ct: current-thread
// runtime; mt: two workers.
#include "../examples/echo_connection.hpp"
#include "bare_server.hpp"

int main(int argc, char** argv) { return bench::serve_bare<EchoConnection>("echo_server", argc, argv); }
