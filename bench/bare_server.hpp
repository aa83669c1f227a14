// What the bare servers (bench/echo_server.cpp, bench/http_hello.cpp)
// share: the peers' arguments, [ct|mt] [PORT=7000] [MAX_SECS=600], and a
// loop that accepts on 127.0.0.1:PORT and spawns one Connection(stream)
// per connection, until SIGTERM or MAX_SECS. Nothing else: no deadlines,
// no count of connections, no graceful shutdown, as the peers' servers.
#pragma once

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

#include <pollux/pollux.hpp>

#include "common.hpp"

namespace bench {

template <class Connection>
int serve_bare(const char* name, int argc, char** argv) {
  using namespace pollux;
  Args a(argc, argv);
  std::string variant = a.str(0, "ct");
  auto port = static_cast<std::uint16_t>(a.num(1, 7000));
  auto max = std::chrono::seconds(a.num(2, 600));
  if (variant != "ct" && variant != "mt") die("unknown variant " + variant);
  Runtime rt = variant == "ct" ? Runtime::current_thread() : Runtime::multi_thread(2);
  TcpListener listener = TcpListener::bind("127.0.0.1:" + std::to_string(port));
  std::fprintf(stderr, "%s listening on 127.0.0.1:%u\n", name, port);
  rt.block_on(listener.incoming() | take_until(select(signal::signal(SIGTERM) | take(1) | count(), sleep(max)))
              | for_each([](TcpStream stream) {
                  stream.set_nodelay(true);
                  (void)spawn(Connection(std::move(stream)));
                }));
  return 0;
}

}  // namespace bench
