// A Redis-compatible server (a subset): PING, ECHO, GET, SET with EX or PX,
// DEL, INCR, PUBLISH, SUBSCRIBE and UNSUBSCRIBE, pipelined requests, and
// RESP errors for malformed input, answered byte for byte as redis-server
// answers (redis-cli and redis-benchmark work against it).
//
// How it is built, with no hand-written poll: the RESP framing is a codec
// (RespCodec, in resp.hpp); each connection reads frames and its subscriptions in one
// loop (merge_variant | try_for_each), queues replies in a bounded channel,
// and a second future writes them out (send_all), flushing whenever the
// queue is empty, so a pipeline of 16 requests costs one write.
//
// Memory per connection is bounded: a request is at most 1 MiB, at most 64
// replies wait, and the write buffer flushes at 8 KiB; a client that never
// reads stalls only itself and is closed at its write deadline. Each
// deadline is idle_secs: a connection with nothing to do (unless it is a
// subscriber waiting for messages), a request still not whole, a reply the
// client does not take.
//
//   mini_redis [addr=127.0.0.1:6380] [ct|mt|N=ct] [max_secs] [idle_secs=60] [grace_secs=5]
//   mini_redis --check <addr>    a client that checks the replies byte for byte
#include <pollux/pollux.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "resp.hpp"
#include "server.hpp"

namespace {

using namespace pollux;
using namespace resp;

// The keyspace and the pub/sub channels, shared by every connection. A
// plain mutex: no one waits while holding it (tokio's mini-redis does the
// same). Expired keys go when they are read, or when a later command
// finds them at the top of the expiry queue, so they do not pile up.
class Db {
 public:
  std::optional<std::string> get(const std::string& key) {
    std::lock_guard lock(mutex_);
    purge();
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    return it->second.value;
  }
  void set(std::string key, std::string value, std::optional<Instant> expires) {
    std::lock_guard lock(mutex_);
    purge();
    if (expires) expirations_.emplace(*expires, key);
    entries_.insert_or_assign(std::move(key), Entry{std::move(value), expires});
  }
  long long del(const Command& command) {
    std::lock_guard lock(mutex_);
    purge();
    long long removed = 0;
    for (std::size_t i = 1; i < command.size(); ++i) removed += static_cast<long long>(entries_.erase(command[i]));
    return removed;
  }
  Result<long long, Err> incr(const std::string& key) {
    std::lock_guard lock(mutex_);
    purge();
    Entry& entry = entries_[key];
    long long n = 0;
    auto [ptr, ec] = std::from_chars(entry.value.data(), entry.value.data() + entry.value.size(), n);
    bool valid = entry.value.empty() || (ec == std::errc() && ptr == entry.value.data() + entry.value.size());
    if (!valid) return Err{"ERR value is not an integer or out of range"};
    if (n == LLONG_MAX) return Err{"ERR increment or decrement would overflow"};
    entry.value = std::to_string(++n);
    return n;
  }
  long long publish(const std::string& channel, std::string message) {
    std::lock_guard lock(mutex_);
    auto it = channels_.find(channel);
    if (it == channels_.end()) return 0;
    auto sent = it->second.send(std::move(message));
    if (!sent) channels_.erase(it);  // nobody listens any more: forget the channel
    return sent ? static_cast<long long>(sent.value()) : 0;
  }
  broadcast::Receiver<std::string> subscribe(const std::string& channel) {
    std::lock_guard lock(mutex_);
    auto it = channels_.find(channel);
    if (it == channels_.end()) it = channels_.emplace(channel, broadcast::channel<std::string>(1024).first).first;
    return it->second.subscribe();
  }
  // Called after a subscriber's receiver is gone: the channel goes with its
  // last subscriber, so names once subscribed to do not pile up.
  void unsubscribed(const std::string& channel) {
    std::lock_guard lock(mutex_);
    auto it = channels_.find(channel);
    if (it != channels_.end() && it->second.receiver_count() == 0) channels_.erase(it);
  }
  // How many channels have a subscriber (for the tests of the leak).
  std::size_t channels() {
    std::lock_guard lock(mutex_);
    return channels_.size();
  }

 private:
  struct Entry {
    std::string value;
    std::optional<Instant> expires;
  };
  void purge() {
    Instant t = now();
    while (!expirations_.empty() && expirations_.top().first <= t) {
      auto it = entries_.find(expirations_.top().second);
      if (it != entries_.end() && it->second.expires && *it->second.expires <= t) entries_.erase(it);
      expirations_.pop();
    }
  }

  std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  using Expiry = std::pair<Instant, std::string>;
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<>> expirations_;
  std::unordered_map<std::string, broadcast::Sender<std::string>> channels_;
};

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

Reply wrong_arity(const std::string& name) { return Err{"ERR wrong number of arguments for '" + name + "' command"}; }

// SET key value [EX seconds | PX milliseconds]
Reply set(Db& db, Command& c) {
  if (c.size() != 3 && c.size() != 5) return c.size() < 3 ? wrong_arity("set") : Err{"ERR syntax error"};
  std::optional<Instant> expires;
  if (c.size() == 5) {
    long long n = 0;
    auto [ptr, ec] = std::from_chars(c[4].data(), c[4].data() + c[4].size(), n);
    if (ec != std::errc() || ptr != c[4].data() + c[4].size())
      return Err{"ERR value is not an integer or out of range"};
    std::string unit = lower(c[3]);
    if (unit != "ex" && unit != "px") return Err{"ERR syntax error"};
    if (n <= 0 || n > 100'000'000'000LL) return Err{"ERR invalid expire time in 'set' command"};
    expires = now() + (unit == "ex" ? std::chrono::milliseconds(n * 1000) : std::chrono::milliseconds(n));
  }
  db.set(std::move(c[1]), std::move(c[2]), expires);
  return Simple{"OK"};
}

// A reply for each command that answers once; SUBSCRIBE and UNSUBSCRIBE are the connection's.
Reply execute(Db& db, Command& c, const std::string& name) {
  if (name == "ping")
    return c.size() == 1 ? Reply(Simple{"PONG"}) : c.size() == 2 ? Reply(Bulk{c[1]}) : wrong_arity(name);
  if (name == "echo") return c.size() == 2 ? Reply(Bulk{c[1]}) : wrong_arity(name);
  if (name == "get") return c.size() == 2 ? Reply(Bulk{db.get(c[1])}) : wrong_arity(name);
  if (name == "set") return set(db, c);
  if (name == "del") return c.size() >= 2 ? Reply(Integer{db.del(c)}) : wrong_arity(name);
  if (name == "publish") return c.size() == 3 ? Reply(Integer{db.publish(c[1], std::move(c[2]))}) : wrong_arity(name);
  if (name == "incr") {
    if (c.size() != 2) return wrong_arity(name);
    auto n = db.incr(c[1]);
    return n ? Reply(Integer{n.value()}) : Reply(n.error());
  }
  // As redis-server: the name and the arguments cut to 128 bytes, so a
  // 1 MiB unknown command does not come back as a 1 MiB error.
  std::string args;
  for (std::size_t i = 1; i < c.size() && args.size() < 128; ++i)
    args += "'" + c[i].substr(0, 128 - args.size()) + "' ";
  return Err{"ERR unknown command '" + c[0].substr(0, 128) + "', with args beginning with: " + args};
}

// One channel a connection listens to: its receiver as a stream, and,
// once that is gone, the channel forgotten if nobody else listens.
class Subscription {
 public:
  using Stream = broadcast::Receiver<std::string>::RecvStream;
  using Item = item_t<Stream>;
  Subscription(std::shared_ptr<Db> db, std::string channel)
      : stream_(db->subscribe(channel).into_stream()), db_(std::move(db)), channel_(std::move(channel)) {}
  Subscription(Subscription&&) noexcept = default;  // leaves `other` with no db: it forgets nothing
  Subscription& operator=(Subscription&&) = delete;
  ~Subscription() {
    if (!db_) return;
    stream_.reset();
    db_->unsubscribed(channel_);
  }
  Poll<std::optional<Item>> poll_next(Context& cx) { return stream_->poll_next(cx); }

 private:
  std::optional<Stream> stream_;
  std::shared_ptr<Db> db_;
  std::string channel_;
};

// One connection: its frames and its subscriptions, read in one loop; its
// replies, written by a second future from a bounded queue.
class Connection {
 public:
  using Subscriptions = StreamMap<std::string, Subscription>;
  using Sink = mpsc::PollSender<Reply>;
  // What a step of the loop returns: one reply, several, or nothing (Closed ends the loop).
  using Step = OneOf<SinkSend<Sink, Reply, false>, SendAll<stream::Iter<std::vector<Reply>>, Sink>,
                     ReadyFuture<Result<void, Closed>>>;

  Connection(TcpStream stream, Sink replies, std::shared_ptr<Db> db, Duration deadline)
      : Connection(std::move(stream).into_split(), std::move(replies), std::move(db)) {
    frames_.set_read_deadline(deadline);
    out_.set_write_deadline(deadline);
  }

  auto events() { return merge_variant(by_ref(frames_) | with_end(), by_ref(subscriptions_)); }
  Sink& replies() { return replies_; }
  bool subscribed() const { return subscriptions_.size() != 0; }
  FramedWrite<OwnedTcpWriteHalf, RespCodec>& out() { return out_; }

  Step step(std::variant<std::optional<Result<Command, FrameError>>, Subscriptions::Item> event) {
    if (auto* message = std::get_if<1>(&event)) {
      if (!message->second) return ready_future(Result<void, Closed>());  // lagged behind: skip
      return feed(replies_,
                  Reply(Array{{Bulk{"message"}, Bulk{message->first}, Bulk{std::move(message->second).value()}}}));
    }
    auto& frame = std::get<0>(event);
    if (!frame) return ready_future(Result<void, Closed>(Closed{}));  // the client is gone
    if (!*frame) return feed(replies_, Reply(Err{"ERR Protocol error: " + frame->error().message()}));
    Command& c = frame->value();
    if (c.empty()) return ready_future(Result<void, Closed>());
    std::string name = lower(c[0]);
    if (name == "subscribe" || name == "unsubscribe") return send_all(replies_, iter(subscribe(name, c)));
    if (subscriptions_.size() != 0 && name != "ping") {
      return feed(
          replies_,
          Reply(Err{"ERR Can't execute '" + name
                    + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"}));
    }
    return feed(replies_, execute(*db_, c, name));
  }

 private:
  Connection(std::pair<OwnedTcpReadHalf, OwnedTcpWriteHalf> halves, Sink replies, std::shared_ptr<Db> db)
      : frames_(std::move(halves.first), RespCodec()),
        out_(std::move(halves.second), RespCodec()),
        replies_(std::move(replies)),
        db_(std::move(db)) {}

  std::vector<Reply> subscribe(const std::string& name, const Command& c) {
    std::vector<Reply> replies;
    auto confirm = [&](std::optional<std::string> channel) {
      long long count = static_cast<long long>(subscriptions_.size());
      replies.push_back(Array{{Bulk{name}, Bulk{std::move(channel)}, Integer{count}}});
    };
    if (name == "subscribe") {
      if (c.size() < 2) return {wrong_arity(name)};
      for (std::size_t i = 1; i < c.size(); ++i) {
        if (!subscriptions_.contains(c[i])) subscriptions_.insert(c[i], Subscription(db_, c[i]));
        confirm(c[i]);
      }
      return replies;
    }
    std::vector<std::string> channels(c.begin() + 1, c.end());
    if (channels.empty()) subscriptions_.for_each([&](const std::string& key, auto&) { channels.push_back(key); });
    if (channels.empty()) confirm(std::nullopt);
    for (auto& channel : channels) {
      subscriptions_.remove(channel);
      confirm(channel);
    }
    return replies;
  }

  FramedRead<OwnedTcpReadHalf, RespCodec> frames_;
  FramedWrite<OwnedTcpWriteHalf, RespCodec> out_;
  Subscriptions subscriptions_;
  Sink replies_;
  std::shared_ptr<Db> db_;
};

// The connection's future: the loop, then closing the queue, joined with
// the writer, which ends once the queue is closed and flushed. It ends when
// idle, except while it has subscriptions (redis-server keeps a quiet
// subscriber too); a request must be whole within the idle limit of its
// first byte, and a reply may wait that long for the client to read.
auto serve_connection(TcpStream stream, std::shared_ptr<Db> db, Duration idle) {
  auto [tx, rx] = mpsc::channel<Reply>(64);
  auto c = std::make_shared<Connection>(std::move(stream), Connection::Sink(std::move(tx)), std::move(db), idle);
  auto loop = c->events() | try_for_each([c](auto event) { return c->step(std::move(event)); });
  auto connection = join(then(std::move(loop), [c](Result<void, Closed>) { return close(c->replies()); }),
                         send_all(c->out(), std::move(rx)))
                    | map([c](auto&&) {});
  return idle_timeout(idle, std::move(connection), [c] { return c->subscribed(); });
}

// The client: each exchange sends its bytes on one connection and expects
// exactly the bytes redis-server answers.
int check(const std::string& addr) {
  Runtime rt = Runtime::current_thread();
  auto connect = [&] { return rt.block_on(TcpStream::connect(SocketAddr::parse(addr))); };
  int checked = 0;
  auto exchange = [&](TcpStream& stream, const std::string& request, const std::string& expected) {
    rt.block_on(write_all(stream, std::as_bytes(std::span(request))));
    std::string got(expected.size(), '\0');
    auto read =
        rt.block_on(timeout(std::chrono::seconds(2), read_exact(stream, std::as_writable_bytes(std::span(got)))));
    if (!read || got != expected) {
      std::fprintf(stderr, "mini_redis --check: for %.200s expected %.200s, got %.200s\n", request.c_str(),
                   expected.c_str(), read ? got.c_str() : "(nothing within 2 s)");
      throw std::runtime_error("a reply differs from redis-server's");
    }
    ++checked;
  };
  auto cmd = [](std::initializer_list<std::string_view> args) {
    std::string out = "*" + std::to_string(args.size()) + "\r\n";
    for (auto a : args) out += "$" + std::to_string(a.size()) + "\r\n" + std::string(a) + "\r\n";
    return out;
  };
  TcpStream a = connect();
  exchange(a, cmd({"PING"}), "+PONG\r\n");
  exchange(a, cmd({"ECHO", "hi there"}), "$8\r\nhi there\r\n");
  exchange(a, cmd({"SET", "k", "v"}), "+OK\r\n");
  exchange(a, cmd({"GET", "k"}), "$1\r\nv\r\n");
  exchange(a, cmd({"GET", "missing"}), "$-1\r\n");
  exchange(a, cmd({"SET", "n", "1"}) + cmd({"INCR", "n"}) + cmd({"INCR", "n"}) + cmd({"GET", "n"}),
           "+OK\r\n:2\r\n:3\r\n$1\r\n3\r\n");  // pipelined: four requests in one write
  exchange(a, cmd({"DEL", "k", "n", "missing"}), ":2\r\n");
  exchange(a, cmd({"SET", "t", "v", "PX", "100"}) + cmd({"GET", "t"}), "+OK\r\n$1\r\nv\r\n");
  rt.block_on(sleep(std::chrono::milliseconds(200)));
  exchange(a, cmd({"GET", "t"}), "$-1\r\n");
  exchange(a, cmd({"SET", "s", "text"}) + cmd({"INCR", "s"}),
           "+OK\r\n-ERR value is not an integer or out of range\r\n");
  exchange(a, cmd({"SET", "s", "v", "EX", "0"}), "-ERR invalid expire time in 'set' command\r\n");
  exchange(a, cmd({"GET"}), "-ERR wrong number of arguments for 'get' command\r\n");
  exchange(a, cmd({"FOO", "bar"}), "-ERR unknown command 'FOO', with args beginning with: 'bar' \r\n");
  // CR and LF in an error come back as spaces: one request, one reply.
  exchange(a, cmd({"FO\r\nO", "x\ny"}) + cmd({"PING"}),
           "-ERR unknown command 'FO  O', with args beginning with: 'x y' \r\n+PONG\r\n");
  exchange(a, cmd({std::string(200, 'n'), std::string(200, 'a')}),
           "-ERR unknown command '" + std::string(128, 'n') + "', with args beginning with: '" + std::string(128, 'a')
               + "' \r\n");
  exchange(a, cmd({"SET", "max", "9223372036854775807"}) + cmd({"INCR", "max"}),
           "+OK\r\n-ERR increment or decrement would overflow\r\n");
  exchange(a, "\r\n" + cmd({"PING"}) + "\n", "+PONG\r\n");  // empty lines, as redis-cli --pipe sends, are skipped

  TcpStream sub = connect();
  exchange(sub, cmd({"SUBSCRIBE", "news", "weather"}),
           "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$7\r\nweather\r\n:2\r\n");
  exchange(a, cmd({"PUBLISH", "news", "hello"}), ":1\r\n");
  exchange(sub, "", "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nhello\r\n");
  exchange(sub, cmd({"GET", "k"}),
           "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in "
           "this context\r\n");
  exchange(sub, cmd({"UNSUBSCRIBE", "news"}), "*3\r\n$11\r\nunsubscribe\r\n$4\r\nnews\r\n:1\r\n");
  exchange(a, cmd({"PUBLISH", "news", "nobody"}), ":0\r\n");

  TcpStream bad = connect();
  exchange(bad, "*1\r\nx3\r\n", "-ERR Protocol error: expected '$', got 'x'\r\n");
  std::array<std::byte, 16> rest{};
  if (rt.block_on(read(bad, rest)) != 0)
    throw std::runtime_error("the server kept a connection after a protocol error");
  TcpStream huge = connect();
  exchange(huge, "*abc\r\n", "-ERR Protocol error: invalid multibulk length\r\n");
  // Where pollux's RESP is stricter than redis-server's: the CRLF after a
  // bulk string is checked, and a request is at most 1 MiB in all.
  TcpStream no_crlf = connect();
  exchange(no_crlf, "*1\r\n$4\r\nPINGxx", "-ERR Protocol error: expected CRLF after a bulk string\r\n");
  TcpStream too_big = connect();
  std::string half(600 * 1024, 'b');
  exchange(too_big,
           "*2\r\n$" + std::to_string(half.size()) + "\r\n" + half + "\r\n$" + std::to_string(half.size()) + "\r\n",
           "-ERR Protocol error: request larger than 1048576 bytes\r\n");
  std::printf("mini_redis --check: all %d replies byte for byte as redis-server's\n", checked);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--check") == 0) {
    if (argc < 3) {
      std::fprintf(stderr, "usage: mini_redis --check <addr>\n");
      return 2;
    }
    try {
      return check(argv[2]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "mini_redis --check: %s\n", e.what());
      return 1;
    }
  }
  if (argc < 2) {
    static char default_addr[] = "127.0.0.1:6380";
    static char* args[] = {argv[0], default_addr, nullptr};
    argv = args;
    argc = 2;
  }
  auto db = std::make_shared<Db>();
  return serve<void>("mini_redis", "redis://", argc, argv, [db](TcpStream stream, const ServerOptions& options) {
    return serve_connection(std::move(stream), db, options.idle);
  });
}
