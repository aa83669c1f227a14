// The load of scripts/soak: well-behaved clients that measure their latency
// next to clients that misbehave, against echo_server and http_hello.
//
//   soak_client ECHO_ADDR HTTP_ADDR SECONDS [ECHO_CONNECTIONS=1000] [SLOWLORIS=100] [P99_MS=10]
//
// - echo: 90 % of the connections send 64 bytes every 100 ms and check the
//   echo; 10 % connect, send half a message and reset (SO_LINGER 0), and
//   again a second later;
// - http: 10 keep-alive clients GET every 20 ms; SLOWLORIS connections send
//   a request one byte a second; others send malformed or oversized
//   requests (which must get 400 and a close), or reset mid-request.
// Prints one line of figures and exits 1 if a well-behaved client saw a
// wrong answer, an error, or a p99 over P99_MS (timed after the first
// second, once the thousand connections are made).
#include <pollux/pollux.hpp>

#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../../examples/http_request.hpp"

namespace {

using namespace std::chrono_literals;
using pollux::Context;
using pollux::Poll;
using pollux::TcpStream;

constexpr std::string_view kGet = "GET / HTTP/1.1\r\nHost: soak\r\n\r\n";
constexpr std::string_view kBadAnswer = "HTTP/1.1 400";

struct Stats {
  std::vector<double> echo_us, http_us;
  long resets = 0, killed = 0, malformed_400 = 0, oversized_400 = 0, slowloris_bytes = 0;
  long errors = 0;
  std::vector<std::string> error_text;
  void error(std::string what) {
    if (++errors <= 5) error_text.push_back(std::move(what));
  }
  void add(const Stats& other) {
    resets += other.resets, killed += other.killed, malformed_400 += other.malformed_400;
    oversized_400 += other.oversized_400, slowloris_bytes += other.slowloris_bytes, errors += other.errors;
    error_text.insert(error_text.end(), other.error_text.begin(), other.error_text.end());
  }
};

// Each of the two client threads counts into its own; the misbehaving
// thread's counts are added to the main thread's at the end.
thread_local Stats stats;
pollux::Instant deadline;
pollux::Instant measured_from;  // after the warm-up: the connections are made

bool over() { return pollux::now() >= deadline; }
bool warm() { return pollux::now() >= measured_from; }

// Sends all of `bytes` from `*sent` on; Ready once done.
Poll<void> poll_send(Context& cx, TcpStream& s, std::string_view bytes, std::size_t& sent) {
  while (sent < bytes.size()) {
    Poll<std::size_t> n = s.poll_write(cx, std::as_bytes(std::span(bytes.substr(sent))));
    if (n.is_pending()) return pollux::pending;
    sent += n.value();
  }
  return pollux::ready();
}

// Reads until `want` bytes are in `in` (or EOF: Ready with fewer).
Poll<void> poll_fill(Context& cx, TcpStream& s, std::string& in, std::size_t want) {
  std::array<char, 4096> buffer;
  while (in.size() < want) {
    Poll<std::size_t> n = s.poll_read(cx, std::as_writable_bytes(std::span(buffer)));
    if (n.is_pending()) return pollux::pending;
    if (n.value() == 0) return pollux::ready();
    in.append(buffer.data(), n.value());
  }
  return pollux::ready();
}

void reset(TcpStream& s) {
  linger hard{1, 0};
  setsockopt(s.native_handle(), SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  s.close();
}

double micros_since(pollux::Instant t) { return std::chrono::duration<double, std::micro>(pollux::now() - t).count(); }

// A client: connect, then run `Body::step` until it says it is done.
// Body: Poll<bool> step(Context&, TcpStream&) -> Ready(true) to reconnect,
// Ready(false) to stop.
template <class Body>
class Client {
 public:
  using Output = void;
  Client(pollux::SocketAddr addr, Body body, pollux::Duration first_delay)
      : addr_(addr), body_(std::move(body)), wait_(pollux::sleep(first_delay)) {}

  Poll<void> poll(Context& cx) {
    try {
      for (;;) {
        if (wait_) {
          if (wait_->poll(cx).is_pending()) return pollux::pending;
          wait_.reset();
          if (over()) return pollux::ready();
          connect_.emplace(TcpStream::connect(addr_));
        }
        if (connect_) {
          Poll<TcpStream> c = connect_->poll(cx);
          if (c.is_pending()) return pollux::pending;
          stream_.emplace(std::move(c.value()));
          stream_->set_nodelay(true);
          connect_.reset();
          body_.start();
        }
        Poll<bool> again = body_.step(cx, *stream_);
        if (again.is_pending()) return pollux::pending;
        stream_.reset();
        if (!again.value() || over()) return pollux::ready();
        wait_.emplace(pollux::sleep(body_.pause()));
      }
    } catch (const std::exception& e) {
      if (body_.counts_errors()) stats.error(e.what());
      return pollux::ready();
    }
  }

 private:
  pollux::SocketAddr addr_;
  Body body_;
  std::optional<pollux::Sleep> wait_;
  std::optional<TcpStream::Connect> connect_;
  std::optional<TcpStream> stream_;
};

template <class Body>
void spawn_client(pollux::Runtime& rt, pollux::SocketAddr addr, Body body, pollux::Duration first_delay) {
  (void)rt.spawn(Client<Body>(addr, std::move(body), first_delay), "soak client");
}

// A well-behaved client: sends `request`, reads an answer of the size
// `expected` has and checks it, records the time it took (after the
// warm-up), rests `period`, and again until the end.
struct RoundTrips {
  RoundTrips(std::string_view req, std::string_view answer, pollux::Duration every, std::vector<double>* times,
             const char* name)
      : request(req), expected(answer), period(every), latencies(times), what(name) {}

  std::string_view request, expected;
  pollux::Duration period;
  std::vector<double>* latencies;
  const char* what;

  std::string in;
  std::size_t sent = 0;
  std::optional<pollux::Sleep> rest;
  pollux::Instant started;
  enum class Step { Send, Receive, Rest } step_ = Step::Send;

  void start() { step_ = Step::Send, sent = 0, in.clear(), started = pollux::now(); }
  pollux::Duration pause() const { return 0ms; }
  bool counts_errors() const { return true; }
  Poll<bool> step(Context& cx, TcpStream& s) {
    for (;;) {
      switch (step_) {
        case Step::Send:
          if (poll_send(cx, s, request, sent).is_pending()) return pollux::pending;
          step_ = Step::Receive;
          break;
        case Step::Receive:
          if (poll_fill(cx, s, in, expected.size()).is_pending()) return pollux::pending;
          if (in != expected) {
            stats.error(std::string(what) + ": a wrong or short answer");
            return pollux::ready(false);
          }
          if (warm()) latencies->push_back(micros_since(started));
          if (over()) return pollux::ready(false);
          rest.emplace(pollux::sleep(period));
          step_ = Step::Rest;
          break;
        case Step::Rest:
          if (rest->poll(cx).is_pending()) return pollux::pending;
          rest.reset();
          start();
          break;
      }
    }
  }
};

const std::string kEchoMessage(64, 'e');

// 64 bytes every 100 ms, each echo checked.
RoundTrips echo_good() { return RoundTrips{kEchoMessage, kEchoMessage, 100ms, &stats.echo_us, "echo"}; }

// Keep-alive GETs every 20 ms, each answer checked.
RoundTrips http_good() { return RoundTrips{kGet, http::kHello, 20ms, &stats.http_us, "http"}; }

// Half a message, a pause, then a reset; and again a second later.
struct EchoResetter {
  std::string half = std::string(32, 'r');
  std::size_t sent = 0;
  std::optional<pollux::Sleep> rest;
  void start() { sent = 0, rest.reset(); }
  pollux::Duration pause() const { return 950ms; }
  bool counts_errors() const { return false; }
  Poll<bool> step(Context& cx, TcpStream& s) {
    if (!rest) {
      if (poll_send(cx, s, half, sent).is_pending()) return pollux::pending;
      rest.emplace(pollux::sleep(50ms));
    }
    if (rest->poll(cx).is_pending()) return pollux::pending;
    reset(s);
    ++stats.resets;
    return pollux::ready(true);
  }
};

// One byte of a request head a second, until the end.
struct Slowloris {
  std::string_view head =
      "GET /slow HTTP/1.1\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  std::size_t next = 0, sent = 0;
  std::optional<pollux::Sleep> rest;
  void start() { next = 0; }
  pollux::Duration pause() const { return 0ms; }
  bool counts_errors() const { return true; }
  Poll<bool> step(Context& cx, TcpStream& s) {
    for (;;) {
      if (rest) {
        if (rest->poll(cx).is_pending()) return pollux::pending;
        rest.reset();
        if (over()) return pollux::ready(false);
      }
      if (poll_send(cx, s, head.substr(next % head.size(), 1), sent).is_pending()) return pollux::pending;
      sent = 0, ++next, ++stats.slowloris_bytes;
      rest.emplace(pollux::sleep(1s));
    }
  }
};

// A malformed request, an oversized head, or half a request and a reset,
// in turn; the first two must be answered 400, then closed.
struct Misbehaving {
  int kind = 0;
  std::string out, in;
  std::size_t sent = 0;
  void start() {
    kind = (kind + 1) % 3;
    sent = 0, in.clear();
    out = kind == 0   ? std::string("BREW /pot HTCPCP/1.0\r\n\r\n")
          : kind == 1 ? "GET /" + std::string(9000, 'x')
                      : std::string("GET /half HT");
  }
  pollux::Duration pause() const { return 100ms; }
  bool counts_errors() const { return kind != 1; }  // an oversized head may be reset while still sent
  Poll<bool> step(Context& cx, TcpStream& s) {
    if (poll_send(cx, s, out, sent).is_pending()) return pollux::pending;
    if (kind == 2) {
      reset(s);
      ++stats.killed;
      return pollux::ready(true);
    }
    if (poll_fill(cx, s, in, 1 << 20).is_pending()) return pollux::pending;  // until the server closes
    if (!in.starts_with(kBadAnswer)) {
      stats.error("http: a bad request was not answered 400: \"" + in.substr(0, 40) + "\"");
      return pollux::ready(false);
    }
    ++(kind == 0 ? stats.malformed_400 : stats.oversized_400);
    return pollux::ready(true);
  }
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(
        stderr, "usage: soak_client ECHO_ADDR HTTP_ADDR SECONDS [ECHO_CONNECTIONS=1000] [SLOWLORIS=100] [P99_MS=10]\n");
    return 2;
  }
  auto echo_addr = pollux::SocketAddr::parse(argv[1]);
  auto http_addr = pollux::SocketAddr::parse(argv[2]);
  auto seconds = std::chrono::seconds(std::atol(argv[3]));
  int echo_connections = argc > 4 ? std::atoi(argv[4]) : 1000;
  int slowloris = argc > 5 ? std::atoi(argv[5]) : 100;
  double p99_limit_us = 1000.0 * (argc > 6 ? std::atof(argv[6]) : 10.0);

  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);

  // The timed, well-behaved clients run on this thread, the misbehaving ones
  // on another: their connects and resets (a thousand a second, each a
  // system call that can take long with many ports in TIME_WAIT) must not
  // hold up the loop that times the answers.
  deadline = pollux::now() + seconds;
  measured_from = pollux::now() + std::min<pollux::Duration>(1s, seconds / 4);
  const int resetters = echo_connections / 10;
  Stats misbehaving;
  std::thread bad([&] {
    auto rt = pollux::Runtime::current_thread();
    rt.block_on(pollux::lazy([&] {
      for (int i = 0; i < resetters; ++i) spawn_client(rt, echo_addr, EchoResetter{}, std::chrono::milliseconds(i));
      for (int i = 0; i < slowloris; ++i) spawn_client(rt, http_addr, Slowloris{}, std::chrono::milliseconds(10 * i));
      for (int i = 0; i < 3; ++i) spawn_client(rt, http_addr, Misbehaving{}, std::chrono::milliseconds(5 * i));
    }));
    rt.block_on(pollux::sleep(seconds + 500ms));  // every client stops by itself at the deadline
    misbehaving = stats;
  });
  {
    auto rt = pollux::Runtime::current_thread();
    rt.block_on(pollux::lazy([&] {
      const int good = echo_connections - resetters;
      for (int i = 0; i < good; ++i) {
        auto spread = std::chrono::microseconds(100'000LL * i / good);  // spread the connects over 100 ms
        spawn_client(rt, echo_addr, echo_good(), spread);
      }
      for (int i = 0; i < 10; ++i) spawn_client(rt, http_addr, http_good(), std::chrono::milliseconds(2 * i));
    }));
    rt.block_on(pollux::sleep(seconds + 500ms));
  }
  bad.join();
  stats.add(misbehaving);

  double echo_p50 = percentile(stats.echo_us, 0.50), echo_p99 = percentile(stats.echo_us, 0.99);
  double http_p50 = percentile(stats.http_us, 0.50), http_p99 = percentile(stats.http_us, 0.99);
  std::printf(
      "soak: echo %zu round trips p50 %.0f us p99 %.0f us; http %zu requests p50 %.0f us p99 %.0f us; "
      "%ld resets mid-message, %ld requests killed midway, %ld malformed and %ld oversized answered 400, "
      "%ld slowloris bytes; %ld errors\n",
      stats.echo_us.size(), echo_p50, echo_p99, stats.http_us.size(), http_p50, http_p99, stats.resets, stats.killed,
      stats.malformed_400, stats.oversized_400, stats.slowloris_bytes, stats.errors);
  for (const std::string& e : stats.error_text) std::printf("soak: error: %s\n", e.c_str());
  bool ok = stats.errors == 0 && !stats.echo_us.empty() && !stats.http_us.empty() && echo_p99 < p99_limit_us
            && http_p99 < p99_limit_us && stats.malformed_400 > 0 && stats.oversized_400 > 0;
  if (!ok) {
    std::printf("soak: FAILED (errors, no traffic, a p99 over %.0f ms, or a bad request not refused)\n",
                p99_limit_us / 1000);
  }
  return ok ? 0 : 1;
}
