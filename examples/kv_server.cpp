// The tutorial's shared-state chapter: a key-value server whose store, a
// Mutex<unordered_map>, is shared by one task per connection. Each
// connection speaks a line protocol:
//
//   SET <key> <value>   ->  OK            (the value is the rest of the line)
//   GET <key>           ->  VALUE <value>, or NIL
//   anything else       ->  ERR <why>     (and the connection goes on)
//   a line over 4096 bytes -> one ERR, then the connection closes
//
// Memory per connection stays bounded whatever the client sends: at most
// one line and a read (8 KiB) waits unparsed, and answers are written out
// once 16 KiB of them wait (plus the one being made), so a client that
// sends but never reads stalls itself, not the server.
//
//   kv_server [addr=127.0.0.1:7000] [ct|mt|N=ct] [max_secs=forever] [idle_secs=60] [grace_secs=5]
//   kv_server --check <addr>    a client that checks the answers; exits 0 if all are right
#include <pollux/pollux.hpp>

#include <array>
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
constexpr std::size_t kMaxPendingOut = 16 * 1024;  // answers waiting to be written

struct Command {
  enum class Kind { Set, Get, Invalid } kind;
  std::string key, value;  // for Invalid: `value` says why
};

Command parse(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
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

// One connection: read lines, answer each (taking the store's lock for
// SET and GET), write the answers, until the peer closes.
class KvConnection {
 public:
  using Output = void;
  KvConnection(pollux::TcpStream stream, std::shared_ptr<Store> store)
      : stream_(std::move(stream)), store_(std::move(store)) {}

  pollux::Poll<void> poll(pollux::Context& cx) {
    try {
      for (;;) {
        switch (state_) {
          case State::Reading: {
            if (closing_ && out_.empty()) return pollux::ready();  // the error about the long line is out
            if (out_.size() >= kMaxPendingOut) {
              state_ = State::Writing;
              break;
            }
            auto newline = in_.find('\n');
            if (newline != std::string::npos) {
              command_ = parse(std::string_view(in_).substr(0, newline));
              in_.erase(0, newline + 1);
              if (command_.kind == Command::Kind::Invalid) {
                out_ += "ERR " + command_.value + "\n";
              } else {
                lock_.emplace(store_->lock());
                state_ = State::Locking;
              }
              break;
            }
            if (in_.size() > kMaxLine && !closing_) {
              out_ += "ERR line longer than 4096 bytes\n";
              closing_ = true;
            }
            if (!out_.empty()) {
              state_ = State::Writing;
              break;
            }
            if (closing_) return pollux::ready();
            auto got = stream_.poll_read(cx, buffer_);
            if (got.is_pending()) return pollux::pending;
            if (got.value() == 0) return pollux::ready();  // the peer closed
            in_.append(reinterpret_cast<const char*>(buffer_.data()), got.value());
            break;
          }
          case State::Locking: {
            auto guard = lock_->poll(cx);
            if (guard.is_pending()) return pollux::pending;
            auto& map = *guard.value();
            if (command_.kind == Command::Kind::Set) {
              map[command_.key] = std::move(command_.value);
              out_ += "OK\n";
            } else if (auto it = map.find(command_.key); it != map.end()) {
              out_ += "VALUE " + it->second + "\n";
            } else {
              out_ += "NIL\n";
            }
            lock_.reset();  // unlocks
            state_ = State::Reading;
            break;
          }
          case State::Writing: {
            auto put = stream_.poll_write(cx, std::as_bytes(std::span(out_).subspan(written_)));
            if (put.is_pending()) return pollux::pending;
            written_ += put.value();
            if (written_ == out_.size()) {
              out_.clear();
              written_ = 0;
              state_ = State::Reading;
            }
            break;
          }
        }
      }
    } catch (const std::system_error&) {
      return pollux::ready();  // reset by the peer and the like: this connection is over
    }
  }

 private:
  enum class State { Reading, Locking, Writing };
  pollux::TcpStream stream_;
  std::shared_ptr<Store> store_;
  State state_ = State::Reading;
  std::string in_, out_;
  std::size_t written_ = 0;
  bool closing_ = false;
  Command command_{Command::Kind::Invalid, {}, {}};
  std::optional<Store::Lock> lock_;
  std::array<std::byte, 4096> buffer_{};
};

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
    auto stream = rt.block_on(pollux::TcpStream::connect(pollux::SocketAddr::parse(addr)));
    std::string request;
    for (auto& line : exchange.lines) request += line + "\n";
    rt.block_on(pollux::write_all(stream, std::as_bytes(std::span(request))));
    std::string received;
    std::array<std::byte, 1024> buffer{};
    std::size_t lines = 0;
    while (lines < exchange.answers.size()) {
      std::size_t n = rt.block_on(pollux::read(stream, buffer));
      if (n == 0) break;
      received.append(reinterpret_cast<const char*>(buffer.data()), n);
      lines = static_cast<std::size_t>(std::count(received.begin(), received.end(), '\n'));
    }
    for (auto& expected : exchange.answers) {
      auto newline = received.find('\n');
      std::string got = newline == std::string::npos ? received : received.substr(0, newline);
      received.erase(0, newline == std::string::npos ? received.size() : newline + 1);
      if (got != expected) {
        std::fprintf(stderr, "kv_server --check: expected \"%s\", got \"%s\"\n", expected.c_str(), got.c_str());
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
  return serve<KvConnection>("kv_server", "", argc, argv,
                             [store](pollux::TcpStream stream) { return KvConnection(std::move(stream), store); });
}
