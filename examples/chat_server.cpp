// chat_server: the chat of tokio's tutorial, as docs/tutorial.md builds it.
// Each line a client sends reaches every other client through a broadcast
// channel. A connection is a reader that broadcasts the client's lines,
// joined with a writer that sends it the others' (send_all into a Framed
// sink): a client that never reads stalls only its own writer, told how
// many lines it missed. Idle clients are let go; SIGINT or SIGTERM tells
// every client "* server shutting down", and the server exits once all
// hung up (or after grace_secs).
//
//   chat_server [addr=127.0.0.1:7000] [ct|mt|N=ct] [max_secs=forever] [idle_secs=60] [grace_secs=5]
//   chat_server --check ADDR [SERVER_PID]    20 clients each hear the 19 others' hellos;
//                                            then SIGTERM: each is told, then the end
#include <signal.h>

#include <set>
#include <string>

#include <pollux/pollux.hpp>

#include "server.hpp"

using namespace pollux;

namespace {

constexpr std::size_t kMaxLine = 4096;
const std::string kShutdownNotice = "* server shutting down";

// What goes through the broadcast channel: a line for everyone but its sender.
struct Message {
  std::size_t from = 0;
  std::string text;
};

struct Hub {
  broadcast::Sender<Message> tx = broadcast::channel<Message>(1024).first;  // only connections subscribe
  std::atomic<std::size_t> next_id{1};
  void say(std::size_t from, std::string text) { (void)tx.send(Message{from, std::move(text)}); }
};

// What the reader and the writer of one connection share.
struct Connection {
  FramedWrite<OwnedTcpWriteHalf, LinesCodec> out;
  CancellationToken done;  // the reader ended, or the server shuts down (a child of its token)
  std::string last_words;  // what the reader asks the writer to say last
};

// One connection: the reader ends it (the client hung up, quit, was idle or
// sent too long a line) and the writer says the last words, then closes.
auto serve_client(TcpStream stream, const CancellationToken& shutdown, std::shared_ptr<Hub> hub, Duration idle) {
  const std::size_t id = hub->next_id++;
  const std::string name = "client " + std::to_string(id);
  auto [reader, writer] = std::move(stream).into_split();
  auto c = std::make_shared<Connection>(Connection{{std::move(writer), LinesCodec()}, shutdown.child_token(), {}});
  auto others = hub->tx.subscribe().into_stream()  // from now on, nothing is missed
                | filter_map([id](Result<Message, broadcast::RecvError> m) -> std::optional<std::string> {
                    if (!m) return "* you missed " + std::to_string(m.error().missed) + " lines";
                    if (m.value().from == id) return std::nullopt;
                    return std::move(m.value().text);
                  });
  hub->say(id, "* " + name + " joined");

  auto last = [c, shutdown] { return shutdown.is_cancelled() ? kShutdownNotice : c->last_words; };
  auto write = send_all(c->out, once(ready_future("* welcome, you are " + name))
                                    | chain(std::move(others) | take_until(c->done.cancelled()))
                                    | chain(once(lazy(last)) | filter([](const std::string& s) { return !s.empty(); })))
               // The close borrows c->out: c rides along in its map, or the Connection
               // could go with the reader while the close is under way.
               | then([c](auto) { return close(c->out) | map([c](auto closed) { return closed; }); });

  auto read =
      FramedRead(std::move(reader), LinesCodec(kMaxLine)) | timeout(idle)
      | try_for_each([c, hub, id](Result<Result<std::string, FrameError>, Elapsed> timed) -> Result<void, std::string> {
          Result<std::string, FrameError> line = std::move(timed).flatten();  // the timeout is a FrameError too
          if (!line && line.error().is_timed_out()) return std::string("* idle for too long, bye");
          if (c->done.is_cancelled()) return {};  // going: close on unread bytes would reset, losing the goodbye
          if (!line) return "* " + line.error().message() + ", bye";
          if (line.value() == "/quit") return std::string("* bye");
          hub->say(id, "[" + std::to_string(id) + "] " + line.value());
          return {};
        })
      | map([c, hub, id, name, shutdown](Result<void, std::string> end) {
          if (!shutdown.is_cancelled()) hub->say(id, "* " + name + " left");
          if (!end) c->last_words = std::move(end).error();
          c->done.cancel();
        });
  return join(std::move(read), std::move(write)) | map([](auto&&) {});
}

// The check: 20 clients.
constexpr std::size_t kClients = 20;

struct Client {
  Framed<TcpStream, LinesCodec> lines;
  std::size_t id = 0;
};

// The lines a client reads that other clients said ("[id] ...").
auto chat_lines(Client& client) {
  return by_ref(client.lines) | filter_map([](Result<std::string, FrameError> line) -> std::optional<std::string> {
           if (line && line.value().starts_with("[")) return std::move(line).value();
           return std::nullopt;
         });
}

// Connects, reads its welcome, waits for everyone, says hello, and hears the others'.
auto chat_client(SocketAddr addr, Barrier& everyone_in, std::vector<std::size_t>& ids) {
  return TcpStream::connect(addr) | then([](TcpStream stream) {
           auto client = std::make_shared<Client>(Client{{std::move(stream), LinesCodec()}, 0});
           return next(client->lines) | map([client](auto welcome) {
                    if (!welcome || !*welcome) throw std::runtime_error("no welcome");
                    client->id = std::stoul(welcome->value().substr(welcome->value().rfind(' ') + 1));
                    return client;
                  });
         })
         | then([&everyone_in, &ids](std::shared_ptr<Client> client) {
             ids.push_back(client->id);
             return everyone_in.wait() | then([client](BarrierWaitResult) {
                      return send(client->lines, "hello from " + std::to_string(client->id));
                    })
                    | map([client](Result<void, FrameError>) { return client; });
           })
         | then([&ids](std::shared_ptr<Client> client) {
             return chat_lines(*client) | take(kClients - 1) | collect<std::set<std::string>>()
                    | map([client, &ids](std::set<std::string> heard) {
                        for (std::size_t j : ids) {  // every id is known once everyone is in
                          std::string hello = "[" + std::to_string(j) + "] hello from " + std::to_string(j);
                          if (j != client->id && !heard.contains(hello)) throw std::runtime_error("missed " + hello);
                        }
                        return client;
                      });
           });
}

// After SIGTERM: a client reads up to the notice, then the end of the stream.
auto told_of_shutdown(std::shared_ptr<Client> client) {
  return by_ref(client->lines) | skip_while([](const auto& line) { return line != kShutdownNotice; }) | collect()
         | map([client](auto rest) {
             if (rest.size() != 1)
               throw std::runtime_error("client " + std::to_string(client->id) + " was not told of the shutdown");
           });
}

int run_check(int argc, char** argv) try {
  if (argc < 3) throw std::invalid_argument("usage: chat_server --check ADDR [SERVER_PID]");
  auto rt = Runtime::current_thread();
  Barrier everyone_in(kClients);
  std::vector<std::size_t> ids;
  std::vector<decltype(chat_client(SocketAddr::parse(argv[2]), everyone_in, ids))> clients;
  for (std::size_t i = 0; i < kClients; ++i)
    clients.push_back(chat_client(SocketAddr::parse(argv[2]), everyone_in, ids));
  auto connected = rt.block_on(join_all(std::move(clients)));
  std::printf("chat_server --check: %zu clients each heard the other %zu hellos\n", kClients, kClients - 1);
  if (argc < 4) return 0;
  ::kill(static_cast<pid_t>(std::atol(argv[3])), SIGTERM);
  std::vector<decltype(told_of_shutdown(nullptr))> told;
  for (auto& client : connected) told.push_back(told_of_shutdown(client));
  rt.block_on(join_all(std::move(told)));
  std::printf("chat_server --check: after SIGTERM all %zu clients were told \"%s\", then the end\n", kClients,
              kShutdownNotice.c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "chat_server --check: %s\n", e.what());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--check") return run_check(argc, argv);
  auto hub = std::make_shared<Hub>();
  return serve<void>("chat_server", "", argc, argv,
                     [hub](TcpStream stream, const CancellationToken& shutdown, const ServerOptions& options) {
                       return serve_client(std::move(stream), shutdown, hub, options.idle);
                     });
}
