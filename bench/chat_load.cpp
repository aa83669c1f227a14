// The chat fan-out load, against examples/chat_server: 20 clients, and in
// each round every client says one line stamped with the time and waits
// for the 19 lines of the others. Prints one JSON line: lines delivered per
// second, and the 50th and 99th percentiles of the time from a line's send
// to its arrival at another client.
//
//   bench_chat_load ADDR [ROUNDS=2000]    (bench/chat_bench.sh starts the server)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <pollux/pollux.hpp>

using namespace pollux;

namespace {

constexpr std::size_t kClients = 20;

struct Client {
  Framed<TcpStream, LinesCodec> lines;
  std::vector<std::int64_t> latencies;
};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The next `n` lines that other clients said ("[id] ...").
auto others_lines(Client& client, std::size_t n) {
  return by_ref(client.lines) | filter_map([](Result<std::string, FrameError> line) -> std::optional<std::string> {
           if (line && line.value().starts_with("[")) return std::move(line).value();
           return std::nullopt;
         })
         | take(n);
}

// Connects and reads the welcome.
auto connect_client(SocketAddr addr) {
  return TcpStream::connect(addr) | then([](TcpStream stream) {
           stream.set_nodelay(true);
           auto client = std::make_shared<Client>(Client{{std::move(stream), LinesCodec()}, {}});
           return next(client->lines) | map([client](auto welcome) {
                    if (!welcome || !*welcome) throw std::runtime_error("no welcome from the server");
                    return client;
                  });
         });
}

// One round of one client: say a stamped line, then note when each of the
// others' lines of this round arrives.
auto round(std::shared_ptr<Client> client) {
  return send(client->lines, "t " + std::to_string(now_ns())) | then([client](Result<void, FrameError> sent) {
           if (!sent) throw std::runtime_error("send: " + sent.error().message());
           return others_lines(*client, kClients - 1) | for_each([client](std::string line) {
                    client->latencies.push_back(now_ns() - std::stoll(line.substr(line.rfind(' ') + 1)));
                  });
         });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_chat_load ADDR [ROUNDS=2000]\n");
    return 2;
  }
  try {
    const SocketAddr addr = SocketAddr::parse(argv[1]);
    const std::size_t rounds = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 2000;
    auto rt = Runtime::current_thread();
    std::vector<decltype(connect_client(addr))> connecting;
    for (std::size_t i = 0; i < kClients; ++i) connecting.push_back(connect_client(addr));
    auto clients = rt.block_on(join_all(std::move(connecting)));
    // A warm-up round, so that every client is in before the clock starts.
    std::vector<decltype(round(nullptr))> warm;
    for (auto& c : clients) warm.push_back(round(c));
    rt.block_on(join_all(std::move(warm)));
    for (auto& c : clients) {
      c->latencies.clear();
      c->latencies.reserve(rounds * (kClients - 1));
    }
    // Each client runs its rounds one after another; a round needs the
    // others' lines of that round, so they go in step.
    auto rounds_of = [rounds](std::shared_ptr<Client> c) {
      return range(std::size_t{0}, rounds) | then([c](std::size_t) { return round(c); }) | count();
    };
    std::vector<decltype(rounds_of(nullptr))> all;
    for (auto& c : clients) all.push_back(rounds_of(c));
    auto t0 = std::chrono::steady_clock::now();
    rt.block_on(join_all(std::move(all)));
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<std::int64_t> merged;
    for (auto& c : clients) merged.insert(merged.end(), c->latencies.begin(), c->latencies.end());
    std::sort(merged.begin(), merged.end());
    double p50 = merged[merged.size() / 2] / 1e3, p99 = merged[merged.size() * 99 / 100] / 1e3;
    std::printf(
        "{\"bench\":\"chat\",\"impl\":\"pollux\",\"variant\":\"fanout_20\",\"n\":%zu,\"ns_per_op\":%.3f,"
        "\"ops_per_s\":%.3f,\"p50_us\":%.1f,\"p99_us\":%.1f}\n",
        merged.size(), seconds * 1e9 / merged.size(), merged.size() / seconds, p50, p99);
    return merged.size() == rounds * kClients * (kClients - 1) ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_chat_load: %s\n", e.what());
    return 1;
  }
}
