// line_proxy: a TCP proxy in two lines of pollux, copy_bidirectional
// between a client and its upstream connection, with a limit on the
// connections served at once: the accept loop takes a Semaphore permit
// before it accepts, and the permit lives as long as its connection.
//
//   line_proxy LISTEN_ADDR UPSTREAM_ADDR [max_conns=64] [ct|mt|N=ct] [max_secs=forever]
//   line_proxy --check
//
// --check runs an echo upstream, the proxy (limit 2) and 8 clients in one
// process: each client sends 256 KiB through the proxy and must get the
// same bytes back, and the upstream must never see more than 2
// connections at once.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <pollux/pollux.hpp>

#include "server.hpp"

using namespace pollux;

namespace {

// A client and its upstream, proxied both ways until both ends closed.
// The permit is given back when the connection ends.
auto proxy_connection(TcpStream client, SocketAddr upstream, SemaphorePermit permit) {
  struct Pair {
    TcpStream client;
    std::optional<TcpStream> upstream;
    SemaphorePermit permit;
  };
  auto pair = std::make_shared<Pair>(Pair{std::move(client), std::nullopt, std::move(permit)});
  return TcpStream::connect(upstream) | then([pair](TcpStream up) {
           pair->upstream.emplace(std::move(up));
           return copy_bidirectional(pair->client, *pair->upstream) | map([pair](auto) {});
         })
         | catch_exception() | map([](Result<Unit, std::exception_ptr>) {});  // one connection's failure ends only it
}

// What a proxy needs besides its listener: where to connect, how many at
// once, how long a connection may stay idle, the token that ends them all,
// and the tracker that counts them.
struct ProxyConfig {
  SocketAddr upstream;
  Semaphore& limit;
  Duration idle;
  CancellationToken shutdown;
  TaskTracker tracker;
};

// Accepts while it holds a permit: at most `limit` connections are served
// at once, and the next client waits in the listen queue. Accepting goes
// through incoming(), which pauses while the process is out of fds.
auto proxy(TcpListener::Incoming& incoming, ProxyConfig& config) {
  return repeat(0) | then([&incoming, &config](int) {
           return config.limit.acquire() | then([&incoming](Result<SemaphorePermit, Closed> permit) {
                    return next(incoming)
                           | map([permit = std::move(permit)](std::optional<TcpStream> accepted) mutable {
                               return std::pair(std::move(*accepted),
                                                std::move(permit).value());  // incoming never ends
                             });
                  });
         })
         | for_each([&config](std::pair<TcpStream, SemaphorePermit> accepted) {
             auto connection = proxy_connection(std::move(accepted.first), config.upstream, std::move(accepted.second));
             (void)config.tracker.spawn(
                 select(idle_timeout(config.idle, std::move(connection)), config.shutdown.cancelled()));
           });
}

int run_proxy(int argc, char** argv) {
  if (argc < 3) {
    throw std::invalid_argument(
        "usage: line_proxy LISTEN_ADDR UPSTREAM_ADDR [max_conns] [ct|mt|N] [max_secs] [idle_secs] [grace_secs]");
  }
  SocketAddr upstream = SocketAddr::parse(argv[2]);
  std::size_t max_conns = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 64;
  Runtime rt = runtime_from_arg(argc > 4 ? argv[4] : "ct");
  ServerOptions options = server_options(argc, argv, 5);
  TcpListener listener = TcpListener::bind(argv[1]);
  Semaphore limit(max_conns);
  std::printf("line_proxy: listening on %s, to %s, at most %zu at once\n", listener.local_addr().to_string().c_str(),
              upstream.to_string().c_str(), max_conns);
  std::fflush(stdout);
  ProxyConfig config{upstream, limit, options.idle, CancellationToken(), TaskTracker()};
  auto incoming = listener.incoming();
  rt.block_on(select(proxy(incoming, config), shutdown_requested(options.max)));
  config.shutdown.cancel();
  wait_for_connections(rt, config.tracker, options.grace, "line_proxy");
  return 0;
}

// The check's upstream: echoes each connection, counting how many it
// serves at once.
struct Upstream {
  std::atomic<int> now{0};
  std::atomic<int> most{0};
};

auto echo(TcpStream stream, Upstream& counts) {
  struct Connection {
    TcpStream stream;
    std::optional<TcpReadHalf> reader;
    std::optional<TcpWriteHalf> writer;
  };
  auto c = std::make_shared<Connection>(Connection{std::move(stream), std::nullopt, std::nullopt});
  auto [r, w] = c->stream.split();
  c->reader.emplace(r);
  c->writer.emplace(w);
  int now = ++counts.now;
  int most = counts.most.load();
  while (now > most && !counts.most.compare_exchange_weak(most, now)) {
  }
  return copy(*c->reader, *c->writer) | map([c, &counts](std::uint64_t) {
           c->stream.shutdown();
           --counts.now;
         });
}

// A client of the check: sends `bytes` through the proxy, ends its
// writing, and reads everything back.
auto client(SocketAddr proxy_addr, std::shared_ptr<const std::string> bytes) {
  return TcpStream::connect(proxy_addr) | then([bytes](TcpStream stream) {
           struct State {
             TcpStream stream;
             std::string back;
           };
           auto s = std::make_shared<State>(State{std::move(stream), {}});
           return s->stream.write_all(std::span<const char>(*bytes)) | then([s] {
                    s->stream.shutdown();
                    return read_to_end(s->stream, s->back) | map([s](std::size_t) { return std::move(s->back); });
                  });
         });
}

int run_check() {
  constexpr int kClients = 8;
  constexpr std::size_t kLimit = 2;
  auto rt = Runtime::current_thread();
  Upstream counts;
  TcpListener upstream = TcpListener::bind("127.0.0.1:0");
  TcpListener listener = TcpListener::bind("127.0.0.1:0");
  Semaphore limit(kLimit);
  auto bytes = std::make_shared<std::string>(256 * 1024, '\0');
  for (std::size_t i = 0; i < bytes->size(); ++i) (*bytes)[i] = static_cast<char>('a' + (i * 7 + i / 1000) % 26);

  std::vector<decltype(client(listener.local_addr(), bytes))> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(client(listener.local_addr(), bytes));
  ProxyConfig config{upstream.local_addr(), limit, std::chrono::seconds(60), CancellationToken(), TaskTracker()};
  auto incoming = listener.incoming();
  auto servers = join(upstream.incoming() | for_each([&counts](TcpStream s) { spawn(echo(std::move(s), counts)); }),
                      proxy(incoming, config));
  auto results = rt.block_on(select(join_all(std::move(clients)), std::move(servers)));
  auto& echoed = std::get<0>(results);
  int good = static_cast<int>(std::count(echoed.begin(), echoed.end(), *bytes));
  std::printf(
      "line_proxy --check: %d of %d clients got their %zu bytes back; at most %d upstream connections at once "
      "(limit %zu)\n",
      good, kClients, bytes->size(), counts.most.load(), kLimit);
  return good == kClients && counts.most.load() <= static_cast<int>(kLimit) && counts.most.load() >= 1 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && std::string(argv[1]) == "--check") return run_check();
    return run_proxy(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "line_proxy: %s\n", e.what());
    return 1;
  }
}
