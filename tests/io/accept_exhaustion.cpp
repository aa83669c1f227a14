// A listener's incoming() stream when the process runs out of file
// descriptors: it pauses without spinning, says so once, and accepts the
// waiting connections once descriptors free up, on both runtimes and for
// TCP and Unix sockets. Each case runs in a child process, whose limit on
// open files it lowers, and reads what the child printed.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "death.hpp"
#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

// Accepts from `incoming` for ever, counting the connections (kept open).
template <class Incoming, class Stream>
struct CountAccepts {
  using Output = void;
  Incoming incoming;
  std::atomic<int>* accepted;
  std::vector<Stream> streams{};
  Poll<void> poll(Context& cx) {
    for (;;) {
      auto next = incoming.poll_next(cx);
      if (next.is_pending()) return pending;
      if (!next.value()) return ready();
      streams.push_back(std::move(*next.value()));
      ++*accepted;
    }
  }
};

// What the child found: connections accepted while out of fds, CPU spent
// then, and connections accepted once the fds came back.
struct Outcome {
  int accepted_while_out = -1;
  double cpu_ms_while_out = -1;
  int accepted_after = -1;
  std::string stderr_text;
};

// Reads the "RESULT" line the child printed.
Outcome outcome_of(const test::Death& death) {
  Outcome outcome;
  outcome.stderr_text = death.stderr_text;
  std::size_t at = death.stderr_text.find("RESULT ");
  if (at != std::string::npos) {
    std::sscanf(death.stderr_text.c_str() + at, "RESULT %d %lf %d", &outcome.accepted_while_out,
                &outcome.cpu_ms_while_out, &outcome.accepted_after);
  }
  return outcome;
}

// The common steps: three clients connect into the backlog, the fds run
// out, the server runs 400 ms that way, then the fds come back.
template <class Listener, class Stream, class Connect>
void out_of_fds_then_back(Runtime rt, Listener& listener, Connect connect) {
  std::atomic<int> accepted{0};
  std::vector<int> clients;
  for (int i = 0; i < 3; ++i) clients.push_back(connect());
  test::HoldEveryFd hold;
  rt.spawn(CountAccepts<typename Listener::Incoming, Stream>{listener.incoming(), &accepted});
  double before = test::process_cpu_ms();
  rt.block_on(sleep(400ms));
  double cpu = test::process_cpu_ms() - before;
  int while_out = accepted.load();
  hold.release();
  for (int i = 0; i < 300 && accepted.load() < 3; ++i) rt.block_on(sleep(10ms));
  std::fprintf(stderr, "RESULT %d %.1f %d\n", while_out, cpu, accepted.load());
  for (int fd : clients) ::close(fd);
}

int connect_tcp(const SocketAddr& addr) {
  int fd = ::socket(addr.native()->sa_family, SOCK_STREAM, 0);
  if (fd < 0 || ::connect(fd, addr.native(), addr.native_length()) != 0) std::abort();
  return fd;
}

int connect_unix(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, sizeof addr.sun_path - 1);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) std::abort();
  return fd;
}

Outcome tcp_outcome(bool multi_thread) {
  test::Death death = test::run_in_child([multi_thread] {
    auto rt = multi_thread ? Runtime::multi_thread(2) : Runtime::current_thread();
    auto listener = TcpListener::bind("127.0.0.1:0");
    SocketAddr addr = listener.local_addr();
    out_of_fds_then_back<TcpListener, TcpStream>(std::move(rt), listener, [addr] { return connect_tcp(addr); });
  });
  return outcome_of(death);
}

void check(const Outcome& outcome) {
  INFO(outcome.stderr_text);
  CHECK(outcome.accepted_while_out == 0);
  CHECK(outcome.cpu_ms_while_out >= 0);
  CHECK(outcome.cpu_ms_while_out < 100);  // a paused stream, not a spin (which burns the whole 400 ms)
  CHECK(outcome.accepted_after == 3);
  std::size_t first = outcome.stderr_text.find("Too many open files");
  CHECK(first != std::string::npos);
  CHECK(outcome.stderr_text.find("not accepting new connections for now") != std::string::npos);
  CHECK(outcome.stderr_text.find("Too many open files", first + 1) == std::string::npos);  // said once
}

}  // namespace

TEST_CASE("a TCP incoming stream out of fds pauses without spinning, says so once, and accepts once fds free up") {
  check(tcp_outcome(false));
}

TEST_CASE("the same holds on a multi-thread runtime") { check(tcp_outcome(true)); }

TEST_CASE("a Unix incoming stream out of fds pauses and accepts once fds free up") {
  test::Death death = test::run_in_child([] {
    auto rt = Runtime::current_thread();
    std::string path = "/tmp/pollux-accept-exhaustion-" + std::to_string(::getpid());
    auto listener = UnixListener::bind(path);
    out_of_fds_then_back<UnixListener, UnixStream>(std::move(rt), listener, [path] { return connect_unix(path); });
    ::unlink(path.c_str());
  });
  check(outcome_of(death));
}

TEST_CASE("accept() still reports running out of fds to its caller") {
  test::Death death = test::run_in_child([] {
    auto rt = Runtime::current_thread();
    auto listener = TcpListener::bind("127.0.0.1:0");
    int client = connect_tcp(listener.local_addr());
    std::optional<test::HoldEveryFd> hold(std::in_place);
    try {
      (void)rt.block_on(listener.accept());
      hold.reset();
      std::fprintf(stderr, "accepted\n");
    } catch (const std::system_error& error) {
      hold.reset();  // first: UBSan's checks of the call below need a descriptor
      std::fprintf(stderr, "threw: %s\n", error.what());
    }
    ::close(client);
  });
  INFO(death.stderr_text);
  CHECK(death.stderr_text.find("threw: pollux::TcpListener::accept on 127.0.0.1:") == 0);
  CHECK(death.stderr_text.find("Too many open files") != std::string::npos);
}

TEST_CASE("the accept() backoff loop of tcp_listener.hpp's opening comment retries a few times while out of fds") {
  test::Death death = test::run_in_child([] {
    auto rt = Runtime::current_thread();
    auto listener = TcpListener::bind("127.0.0.1:0");
    int client = connect_tcp(listener.local_addr());
    std::optional<test::HoldEveryFd> hold(std::in_place);
    int tries = 0;
    bool accepted = false;
    auto started = std::chrono::steady_clock::now();
    auto pause = std::chrono::milliseconds(5);
    while (!accepted) {
      if (hold && std::chrono::steady_clock::now() - started > 400ms) hold.reset();  // the fds come back
      ++tries;
      try {
        auto [stream, peer] = rt.block_on(listener.accept());
        pause = std::chrono::milliseconds(5);
        accepted = true;
      } catch (const std::system_error& e) {
        if (e.code() != std::errc::too_many_files_open) throw;
        rt.block_on(pollux::sleep(pause));  // the backoff: no spin
        pause = std::min(pause * 2, std::chrono::milliseconds(640));
      }
    }
    std::fprintf(stderr, "TRIES %d\n", tries);
    ::close(client);
  });
  INFO(death.stderr_text);
  int tries = -1;
  std::size_t at = death.stderr_text.find("TRIES ");
  REQUIRE(at != std::string::npos);
  std::sscanf(death.stderr_text.c_str() + at, "TRIES %d", &tries);
  CHECK(tries >= 2);
  CHECK(tries <= 12);  // 5, 10, 20 ... ms apart: a spin would try thousands of times
}
