// The tutorial's shared-state chapter: a key-value server whose store, a
// Mutex<unordered_map>, is shared by one task per connection. Each
// connection speaks a line protocol:
//
//   SET <key> <value>   ->  OK            (the value is the rest of the line)
//   GET <key>           ->  VALUE <value>, or NIL
//   anything else       ->  ERR <why>     (and the connection goes on)
//   a line over 4096 bytes -> one ERR, then the connection closes
//
// A connection is one pipeline with no hand-written poll: the lines of a
// Framed connection, each turned into the future of its answer (then), sent
// back into the same Framed (send_all). Memory per connection stays bounded
// whatever the client sends: one line waits unparsed, and once 8 KiB of
// answers wait to be written no line is read, so a client that sends but
// never reads stalls itself, not the server.
//
//   kv_server [addr=127.0.0.1:7000] [ct|mt|N=ct] [max_secs=forever] [idle_secs=60] [grace_secs=5]
//   kv_server --check <addr>    a client that checks the answers; exits 0 if all are right
#include <pollux/pollux.hpp>

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server.hpp"

namespace {

using Store = pollux::Mutex<std::unordered_map<std::string, std::string>>;
constexpr std::size_t kMaxLine = 4096;

struct Command {
  enum class Kind { Set, Get, Invalid } kind;
  std::string key, value;  // for Invalid: `value` says why
};

// A line as LinesCodec gives it: without its "\n" or "\r\n".
Command parse(std::string_view line) {
  auto space = line.find(' ');
  std::string_view verb = line.substr(0, space);
  std::string_view rest = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
  auto key_end = rest.find(' ');
  std::string_view key = rest.substr(0, key_end);
  if (verb == "GET") {
    if (key.empty() || key_end != std::string_view::npos) return {Command::Kind::Invalid, {}, "usage: GET <key>"};
    return {Command::Kind::Get, std::string(key), {}};
  }
  if (verb == "SET") {
    if (key.empty() || key_end == std::string_view::npos || key_end + 1 >= rest.size()) {
      return {Command::Kind::Invalid, {}, "usage: SET <key> <value>"};
    }
    return {Command::Kind::Set, std::string(key), std::string(rest.substr(key_end + 1))};
  }
  if (verb.empty()) return {Command::Kind::Invalid, {}, "empty line"};
  return {Command::Kind::Invalid, {}, "unknown command '" + std::string(verb) + "' (SET or GET)"};
}

using KvLines = pollux::Framed<pollux::TcpStream, pollux::LinesCodec>;

// What a command does to the store, under its lock.
struct Apply {
  Command command;
  std::string operator()(pollux::MutexGuard<std::unordered_map<std::string, std::string>> guard) {
    auto& map = *guard;
    if (command.kind == Command::Kind::Set) {
      map[command.key] = std::move(command.value);
      return "OK";
    }
    auto it = map.find(command.key);
    return it == map.end() ? "NIL" : "VALUE " + it->second;
  }
};

// The future of a line's answer: at once for a line that is not a command,
// after taking the store's lock for SET and GET.
pollux::Either<pollux::ReadyFuture<std::string>, pollux::Map<Store::Lock, Apply>> answer(
    Store& store, pollux::Result<std::string, pollux::FrameError> line) {
  if (!line) {  // too long (it ends the stream), or the connection failed
    return pollux::ready_future("ERR " + line.error().message());
  }
  Command command = parse(line.value());
  if (command.kind == Command::Kind::Invalid) return pollux::ready_future("ERR " + command.value);
  return pollux::map(store.lock(), Apply{std::move(command)});
}

// One connection: each line's answer, in order, until the client hangs up
// or goes idle. A line must be whole within the idle limit of its first
// byte, and an answer may wait that long for the client to read.
auto serve_connection(pollux::TcpStream stream, std::shared_ptr<Store> store, pollux::Duration idle) {
  auto lines = std::make_shared<KvLines>(std::move(stream), pollux::LinesCodec(kMaxLine));
  lines->set_read_deadline(idle);
  lines->set_write_deadline(idle);
  auto answers = pollux::by_ref(*lines) | pollux::then([store](auto line) { return answer(*store, std::move(line)); });
  return pollux::idle_timeout(idle, pollux::send_all(*lines, std::move(answers)) | pollux::map([lines](auto) {}));
}

// The client: sends each connection's lines, reads as many answers, and
// compares them with what the protocol promises.
int check(const std::string& addr) {
  pollux::Runtime rt = pollux::Runtime::current_thread();
  struct Exchange {
    std::vector<std::string> lines, answers;
  };
  std::vector<Exchange> exchanges = {
      {{"SET greeting hello world", "SET answer 41", "SET answer 42"}, {"OK", "OK", "OK"}},
      {{"GET greeting", "GET answer", "GET missing"}, {"VALUE hello world", "VALUE 42", "NIL"}},
      {{"DEL greeting", "GET", "SET lonely", "", "GET greeting"},
       {"ERR unknown command 'DEL' (SET or GET)", "ERR usage: GET <key>", "ERR usage: SET <key> <value>",
        "ERR empty line", "VALUE hello world"}},
  };
  int checked = 0;
  for (auto& exchange : exchanges) {  // one connection each, one after the other
    KvLines lines(rt.block_on(pollux::TcpStream::connect(pollux::SocketAddr::parse(addr))), pollux::LinesCodec());
    if (!rt.block_on(pollux::send_all(lines, pollux::iter(exchange.lines)))) throw std::runtime_error("cannot send");
    auto answers = rt.block_on(pollux::by_ref(lines) | pollux::take(exchange.answers.size()) | pollux::collect());
    for (std::size_t i = 0; i < exchange.answers.size(); ++i) {
      std::string got = i < answers.size() && answers[i] ? answers[i].value() : "(nothing)";
      if (got != exchange.answers[i]) {
        std::fprintf(stderr, "kv_server --check: expected \"%s\", got \"%s\"\n", exchange.answers[i].c_str(),
                     got.c_str());
        return 1;
      }
      std::printf("  %-40s ok\n", ("\"" + got + "\"").c_str());
      ++checked;
    }
  }
  std::printf("kv_server --check: all %d answers as expected\n", checked);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--check") == 0) {
    if (argc < 3) {
      std::fprintf(stderr, "usage: kv_server --check <addr>\n");
      return 2;
    }
    try {
      return check(argv[2]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kv_server --check: %s\n", e.what());
      return 1;
    }
  }
  auto store = std::make_shared<Store>();
  return serve<void>("kv_server", "", argc, argv, [store](pollux::TcpStream stream, const ServerOptions& options) {
    return serve_connection(std::move(stream), store, options.idle);
  });
}
