// The echo server of "Writing an Async Runtime in Rust": a listener that
// spawns one task per connection (serve, in server.hpp), and a task that
// reads what arrives and writes it back until the peer closes
// (echo_connection.hpp). Both are hand-written futures: a state per point
// where the Rust version awaits.
//
//   echo_server [addr=127.0.0.1:7000] [ct|mt|N=ct] [max_secs=forever] [idle_secs=60] [grace_secs=5]
//
// Memory per connection: its 4 KiB buffer and the task (under 5 KiB).
#include <pollux/pollux.hpp>

#include "echo_connection.hpp"
#include "server.hpp"

int main(int argc, char** argv) { return serve<EchoConnection>("echo_server", "", argc, argv); }
