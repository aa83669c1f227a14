// chat_server: the chat of tokio's tutorial. Every line a client sends goes
// to every other client, through one broadcast channel; each connection is
// a task that reads lines from its client and messages from the others at
// once, with no hand-written poll: the two sources are merged into one
// stream of events (merge_variant) and a step per event decides whether
// the connection goes on (try_for_each). A client idle for too long is
// told so and let go; on SIGINT or SIGTERM every client is told "server
// shutting down" before its socket closes, and the server exits once all
// are gone (or after grace_secs; a second signal ends the wait at once).
//
// The shutdown notice does not go through the broadcast ring, where a
// flood of lines could push it out: it is a CancellationToken that every
// connection merges with its other sources. A client that never reads
// stalls only its own connection, which its idle limit ends (IdleLimit,
// in server.hpp). Memory is bounded: a line is at most 4 KiB (a longer one
// ends its connection), the broadcast ring holds at most 1024 messages
// (4 MiB) for the slowest reader, a connection holds one line being read
// and one being written (under 16 KiB with its task), and nothing is kept
// for a connection once it ended (a TaskTracker counts them; no set holds
// them).
//
//   chat_server [addr=127.0.0.1:7000] [ct|mt|N=ct] [max_secs=forever] [idle_secs=300] [grace_secs=5]
//   chat_server --check ADDR [SERVER_PID]
//   chat_server --load ADDR [ROUNDS=2000]
//
// --check connects 20 clients, has each say hello once all are in, and
// checks that every hello reaches every other client; given the server's
// pid, it then sends SIGTERM and checks that every client is told the
// server is shutting down before its connection ends. --load measures the
// fan-out: 20 clients, and in each round every client says one line and
// waits for the 19 lines of the others; it prints one JSON line with the
// lines delivered per second and the 99th percentile of the time from a
// line's send to its arrival at another client.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ranges>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <variant>

#include <pollux/pollux.hpp>

#include "server.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

// What goes through the broadcast channel: a line for everyone but its
// sender.
struct Message {
  std::size_t from = 0;
  std::string text;
};

constexpr std::size_t kMaxLine = 4096;

// Why a connection ends (besides the client hanging up).
enum class Leave { Quit, Idle, Shutdown };

struct Hub {
  Hub(broadcast::Sender<Message> sender, Duration idle_limit) : tx(std::move(sender)), idle(idle_limit) {}

  broadcast::Sender<Message> tx;
  Duration idle;
  CancellationToken shutdown;  // cancelled once: every connection says goodbye
  std::atomic<std::size_t> next_id{1};

  // Sends to every connection. With no connection left, nobody is told,
  // and that is fine: the send's error says only that.
  void announce(Message message) { (void)tx.send(std::move(message)); }
};

// What a client does: a line, silence for too long, or hanging up.
struct Line {
  std::string text;
};
struct Idle {};
struct Hangup {};
using FromClient = std::variant<Line, Idle, Hangup>;

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;  // C++20 deduces it; Clang 14 needs it written

// The write half of a connection and the line being written, shared by the
// steps of its loop: each step's write borrows them and ends before the
// next step starts.
struct Out {
  OwnedTcpWriteHalf writer;
  std::string line;

  // Writes `text` and a newline, then answers `result`. The `last` words
  // end the writing too (the client reads the end of the stream after
  // them), and the connection goes on reading until the client hangs up:
  // closing a socket with bytes unread would reset it, and a reset can
  // discard the goodbye before the client has read it.
  auto say(std::string text, Result<void, Leave> result, bool last = false) {
    line = std::move(text);
    if (!line.empty()) line += '\n';
    if (last) closed = true;
    return writer.write_all(std::span<const char>(line)) | then([this, last] {
             return poll_fn<Unit>([this, last](Context& cx) -> Poll<Unit> {
               if (last && writer.poll_shutdown(cx).is_pending()) return pending;
               return ready(Unit{});
             });
           })
           | map([result](Unit) { return result; });
  }
  bool closed = false;  // the last words were said: what the client still sends is dropped
};

auto serve_client(TcpStream stream, std::shared_ptr<Hub> hub) {
  const std::size_t id = hub->next_id++;
  auto messages = hub->tx.subscribe().into_stream();  // from now on, nothing is missed
  auto [reader, writer] = std::move(stream).into_split();
  auto out = std::make_shared<Out>(Out{std::move(writer), {}});

  auto from_client = lines(std::move(reader), kMaxLine) | timeout(hub->idle)
                     | map([](Result<std::string, Elapsed> line) -> FromClient {
                         if (!line) return Idle{};
                         return Line{std::move(line).value()};
                       })
                     | chain(once(ready_future(FromClient(Hangup{}))));

  hub->announce(Message{id, "* client " + std::to_string(id) + " joined"});
  auto welcome = out->say("* welcome, you are client " + std::to_string(id), {});

  auto loop = merge_variant(std::move(from_client), std::move(messages), once(hub->shutdown.cancelled()))
              | try_for_each([id, out, hub](auto event) {
                  return std::visit(
                      Overloaded{
                          [&](FromClient from) {
                            return std::visit(
                                Overloaded{[&](Line line) {
                                             if (out->closed) return out->say("", {});  // draining
                                             if (line.text == "/quit") return out->say("* bye", Leave::Quit);
                                             hub->announce(Message{id, "[" + std::to_string(id) + "] " + line.text});
                                             return out->say("", {});
                                           },
                                           [&](Idle) {
                                             if (out->closed) return out->say("", Leave::Shutdown);
                                             return out->say("* idle for too long, bye", Leave::Idle);
                                           },
                                           [&](Hangup) { return out->say("", out->closed ? Leave::Shutdown : Leave::Quit); }},
                                std::move(from));
                          },
                          [&](Result<Message, broadcast::RecvError> message) {
                            if (out->closed) return out->say("", {});
                            if (!message) {  // lagged: this client fell behind the others
                              return out->say("* you missed " + std::to_string(message.error().missed) + " messages", {});
                            }
                            if (message.value().from == id) return out->say("", {});
                            return out->say(std::move(message.value().text), {});
                          },
                          [&](Unit) { return out->say("* server shutting down", {}, true); }},
                      std::move(event));
                });

  return std::move(welcome) | then([loop = std::move(loop)](Result<void, Leave>) mutable { return std::move(loop); })
         | catch_exception()  // a client that resets its connection ends only that connection
         | map([id, hub](Result<Result<void, Leave>, std::exception_ptr> left) {
             if (!left) {
               try {
                 std::rethrow_exception(left.error());
               } catch (const std::exception& e) {
                 std::printf("chat_server: client %zu: %s\n", id, e.what());
               }
             }
             bool shutting_down = left && !left.value() && left.value().error() == Leave::Shutdown;
             if (!shutting_down) hub->announce(Message{id, "* client " + std::to_string(id) + " left"});
           });  // `out` goes with the loop: the write half shuts down, then the socket closes
}

int run_server(int argc, char** argv) {
  std::string addr = argc > 1 ? argv[1] : "127.0.0.1:7000";
  Runtime rt = runtime_from_arg(argc > 2 ? argv[2] : "ct");
  ServerOptions options = server_options(argc, argv, 3);
  if (argc <= 4) options.idle = std::chrono::seconds(300);  // chat clients sit quietly for a while
  // The channel's own receiver goes at once: only connections subscribe,
  // so with nobody connected the ring holds nothing.
  auto hub = std::make_shared<Hub>(broadcast::channel<Message>(1024).first, options.idle);
  TcpListener listener = TcpListener::bind(addr);
  std::printf("chat_server: listening on %s\n", listener.local_addr().to_string().c_str());
  std::fflush(stdout);

  TaskTracker connections;
  rt.block_on(listener.incoming() | take_until(shutdown_requested(options.max))
              | for_each([&connections, hub](TcpStream stream) {
                  stream.set_nodelay(true);
                  // Detached: the task is freed when the connection ends.
                  (void)connections.spawn(IdleLimit(serve_client(std::move(stream), hub), hub->idle));
                }));
  hub->shutdown.cancel();
  wait_for_connections(rt, connections, options.grace, "chat_server");
  return 0;
}

// One client of the check: its connection, the lines it reads, its id.
struct Client {
  explicit Client(TcpStream stream) {
    auto [r, w] = std::move(stream).into_split();
    writer.emplace(std::move(w));
    incoming.emplace(lines(std::move(r)));
  }
  std::optional<OwnedTcpWriteHalf> writer;
  std::optional<Lines<BufReader<OwnedTcpReadHalf>>> incoming;
  std::size_t id = 0;
  std::string hello;
};

constexpr std::size_t kClients = 20;

// Connects, reads its welcome, waits until all are in, says hello, then
// reads until it has every other client's hello.
auto chat_client(SocketAddr addr, Barrier& everyone_in, std::vector<std::size_t>& ids) {
  return TcpStream::connect(addr) | then([&everyone_in, &ids](TcpStream stream) {
           auto client = std::make_shared<Client>(std::move(stream));
           return next(*client->incoming) | then([client, &everyone_in, &ids](std::optional<std::string> welcome) {
                    if (!welcome || welcome->rfind("* welcome, you are client ", 0) != 0) throw std::runtime_error("no welcome");
                    client->id = std::stoul(welcome->substr(welcome->rfind(' ') + 1));
                    ids.push_back(client->id);
                    return everyone_in.wait() | then([client](BarrierWaitResult) {
                             client->hello = "hello from " + std::to_string(client->id) + "\n";
                             return client->writer->write_all(std::span<const char>(client->hello)) | map([client] { return client; });
                           });
                  });
         })
         | then([&ids](std::shared_ptr<Client> client) {
             return by_ref(*client->incoming) | filter([](const std::string& line) { return line.starts_with("["); })
                    | take(kClients - 1) | collect<std::set<std::string>>()
                    | map([client, &ids](std::set<std::string> heard) {
                        for (std::size_t j : ids) {  // every client's id is known once all are in
                          std::string expected = "[" + std::to_string(j) + "] hello from " + std::to_string(j);
                          if (j != client->id && !heard.contains(expected)) {
                            throw std::runtime_error("client " + std::to_string(client->id) + " missed: " + expected);
                          }
                        }
                        return client;
                      });
           });
}

// Connects kClients clients; each has heard every other's hello.
std::vector<std::shared_ptr<Client>> connect_clients(Runtime& rt, SocketAddr addr) {
  Barrier everyone_in(kClients);
  std::vector<std::size_t> ids;
  std::vector<decltype(chat_client(addr, everyone_in, ids))> clients;
  for (std::size_t i = 0; i < kClients; ++i) clients.push_back(chat_client(addr, everyone_in, ids));
  return rt.block_on(join_all(std::move(clients)));
}

// After SIGTERM: the client reads up to the server's notice, then the end.
auto told_of_shutdown(std::shared_ptr<Client> client) {
  return by_ref(*client->incoming) | skip_while([](const std::string& line) { return line != "* server shutting down"; })
         | collect() | map([client](std::vector<std::string> rest) {
             if (rest != std::vector<std::string>{"* server shutting down"}) {
               throw std::runtime_error("client " + std::to_string(client->id) + " was not told of the shutdown");
             }
           });
}

int run_check(const char* addr_text, const char* server_pid) {
  auto rt = Runtime::current_thread();
  auto t0 = std::chrono::steady_clock::now();
  auto connected = connect_clients(rt, SocketAddr::parse(addr_text));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("chat_server --check: %zu clients each heard the other %zu hellos (%zu messages delivered in %.1f ms)\n",
              kClients, kClients - 1, kClients * (kClients - 1), ms);
  if (server_pid != nullptr) {
    ::kill(static_cast<pid_t>(std::atol(server_pid)), SIGTERM);
    std::vector<decltype(told_of_shutdown(nullptr))> waits;
    for (auto& client : connected) waits.push_back(told_of_shutdown(client));
    rt.block_on(join_all(std::move(waits)));
    std::printf("chat_server --check: SIGTERM sent; all %zu clients were told \"server shutting down\", then the end\n",
                kClients);
  }
  return 0;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One round of the load for one client: say a line stamped with the time,
// then read the other clients' lines of this round, noting how long each
// took to arrive.
auto load_round(std::shared_ptr<Client> client, std::vector<std::int64_t>& latencies) {
  client->hello = "t " + std::to_string(now_ns()) + "\n";
  return client->writer->write_all(std::span<const char>(client->hello)) | then([client, &latencies] {
           return by_ref(*client->incoming) | filter([](const std::string& line) { return line.starts_with("["); })
                  | take(kClients - 1) | for_each([&latencies](std::string line) {
                      latencies.push_back(now_ns() - std::stoll(line.substr(line.rfind(' ') + 1)));
                    });
         });
}

int run_load(const char* addr_text, std::size_t rounds) {
  auto rt = Runtime::current_thread();
  auto connected = connect_clients(rt, SocketAddr::parse(addr_text));  // also a warm-up: every hello heard
  std::vector<std::vector<std::int64_t>> latencies(kClients);
  for (auto& l : latencies) l.reserve(rounds * (kClients - 1));
  // Each client runs its rounds one after another; a round of one client
  // needs the others' lines of that round, so they go in step.
  auto client_rounds = [&](std::size_t i) {
    return range(std::size_t{0}, rounds)
           | then([client = connected[i], &l = latencies[i]](std::size_t) { return load_round(client, l); }) | count();
  };
  std::vector<decltype(client_rounds(0))> all;
  for (std::size_t i = 0; i < kClients; ++i) all.push_back(client_rounds(i));
  auto t0 = std::chrono::steady_clock::now();
  rt.block_on(join_all(std::move(all)));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<std::int64_t> merged;
  for (auto& l : latencies) merged.insert(merged.end(), l.begin(), l.end());
  std::sort(merged.begin(), merged.end());
  double p50 = merged[merged.size() / 2] / 1e3, p99 = merged[merged.size() * 99 / 100] / 1e3;
  std::printf("{\"bench\":\"chat\",\"impl\":\"pollux\",\"variant\":\"fanout_20\",\"n\":%zu,\"ns_per_op\":%.3f,"
              "\"ops_per_s\":%.3f,\"p50_us\":%.1f,\"p99_us\":%.1f}\n",
              merged.size(), seconds * 1e9 / merged.size(), merged.size() / seconds, p50, p99);
  return merged.size() == rounds * kClients * (kClients - 1) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && std::string(argv[1]) == "--check") {
      if (argc < 3) throw std::invalid_argument("usage: chat_server --check ADDR [SERVER_PID]");
      return run_check(argv[2], argc > 3 ? argv[3] : nullptr);
    }
    if (argc > 1 && std::string(argv[1]) == "--load") {
      if (argc < 3) throw std::invalid_argument("usage: chat_server --load ADDR [ROUNDS]");
      return run_load(argv[2], argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 2000);
    }
    return run_server(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chat_server: %s\n", e.what());
    return 1;
  }
}
