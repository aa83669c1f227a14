// A cancellation storm: 100,000 socket operations (reads, writes, accepts,
// connects), each destroyed at a random point of its life (before its
// first poll, after it, while the kernel holds it, or never), on a
// current-thread and on a multi-thread runtime, over TCP and over Unix
// stream sockets. The connections that carry on must lose no byte and
// reorder none; at the end no fd is left open and (under ASan) no memory.
// Runs on both backends (io_cancel_storm_epoll).
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

// The byte at position `i` of every connection's stream.
std::byte byte_at(std::uint64_t i) { return static_cast<std::byte>((i * 7 + (i >> 8)) & 0xff); }

// The sockets a storm runs on: TCP over loopback, or Unix stream sockets
// at a path in the abstract namespace (nothing in the file system).
// kBacklog: the unread bytes a finishing write may add to; beyond it a
// write only polls once, since one that waits for the reader would wait
// out its limit. TCP's loopback holds several MiB unread. A Unix socket
// counts each unread write's buffer overhead (some 700 bytes) against its
// limit, so a run of small writes fills it with a few KiB: a finishing
// write there goes only onto a drained connection.
struct Tcp {
  static constexpr std::uint64_t kBacklog = 256 * 1024;
  TcpListener listener = TcpListener::bind("127.0.0.1:0");
  auto connect() { return TcpStream::connect(listener.local_addr()); }
  static TcpStream accepted(std::pair<TcpStream, SocketAddr> connection) { return std::move(connection.first); }
};
struct Unix {
  static constexpr std::uint64_t kBacklog = 0;
  std::string path = std::string(1, '\0') + "pollux-storm-" + std::to_string(::getpid());
  UnixListener listener = UnixListener::bind(path);
  auto connect() { return UnixStream::connect(path); }
  static UnixStream accepted(UnixStream connection) { return connection; }
};

template <class Stream>
struct Pair {
  Stream client;
  Stream server;
  std::uint64_t sent = 0;      // bytes the client's completed writes took
  std::uint64_t received = 0;  // bytes the server's completed reads gave, all checked
  bool corrupt = false;
};

// How one operation ends: dropped unpolled, dropped after one poll,
// dropped after a short wait (the kernel may hold it), or run to the end
// with a generous limit.
enum class End { Unpolled, OnePoll, ShortWait, Finish };

template <class F>
std::optional<output_t<F>> drive(Runtime& rt, F future, End end, std::mt19937& random) {
  switch (end) {
    case End::Unpolled:
      return std::nullopt;
    case End::OnePoll: {
      auto guard = rt.enter();
      Poll<output_t<F>> polled = test::poll_once(future);
      if (polled.is_ready()) return std::move(polled).value();
      return std::nullopt;
    }
    case End::ShortWait: {
      auto wait = std::chrono::microseconds(std::uniform_int_distribution<int>(0, 300)(random));
      auto result = rt.block_on(timeout(wait, std::move(future)));
      if (result.has_value()) return std::move(result).value();
      return std::nullopt;
    }
    case End::Finish: {
      auto result = rt.block_on(timeout(5s, std::move(future)));
      if (result.has_value()) return std::move(result).value();
      return std::nullopt;
    }
  }
  return std::nullopt;
}

template <class Stream>
void check_read(Pair<Stream>& pair, std::span<const std::byte> bytes) {
  for (std::byte b : bytes) {
    if (b != byte_at(pair.received++)) pair.corrupt = true;
  }
}

template <class Sockets>
void storm(Runtime& rt, int operations) {
  int fds_before = test::open_fds();
  {
    Sockets sockets;
    auto& listener = sockets.listener;
    using Stream = decltype(Sockets::accepted(rt.block_on(listener.accept())));
    std::vector<Pair<Stream>> pairs;
    for (int i = 0; i < 8; ++i) {
      auto [client, accepted] = rt.block_on(join(sockets.connect(), listener.accept()));
      pairs.push_back(Pair<Stream>{std::move(client), Sockets::accepted(std::move(accepted))});
    }
    std::mt19937 random(12345);
    std::vector<std::byte> chunk(3000);
    std::vector<std::byte> buffer(2000);
    std::size_t spare_accepts = 0;  // connects that completed and wait in the backlog
    for (int op = 0; op < operations; ++op) {
      auto end = static_cast<End>(std::uniform_int_distribution<int>(0, 3)(random));
      Pair<Stream>& pair = pairs[std::uniform_int_distribution<std::size_t>(0, pairs.size() - 1)(random)];
      int kind = std::uniform_int_distribution<int>(0, 99)(random);
      if (kind < 45) {
        // Keep the unread backlog bounded so that finishing writes finish.
        if (pair.sent - pair.received > Sockets::kBacklog) end = End::OnePoll;
        std::size_t size = std::uniform_int_distribution<std::size_t>(1, chunk.size())(random);
        for (std::size_t i = 0; i < size; ++i) chunk[i] = byte_at(pair.sent + i);
        auto written = drive(rt, pair.client.write(std::span<const std::byte>(chunk).first(size)), end, random);
        if (written) pair.sent += *written;
      } else if (kind < 90) {
        if (end == End::Finish && pair.received == pair.sent) end = End::ShortWait;  // nothing to wait for
        std::size_t size = std::uniform_int_distribution<std::size_t>(1, buffer.size())(random);
        auto got = drive(rt, pair.server.read(std::span<std::byte>(buffer).first(size)), end, random);
        if (got) check_read(pair, std::span<const std::byte>(buffer).first(*got));
      } else if (kind < 95) {
        auto connected = drive(rt, sockets.connect(), end, random);
        if (connected) ++spare_accepts;  // and it closes here
      } else {
        if (end == End::Finish && spare_accepts == 0) end = End::ShortWait;
        auto accepted = drive(rt, listener.accept(), end, random);
        if (accepted && spare_accepts > 0) --spare_accepts;
      }
    }
    // The survivors: every byte written arrives, in order.
    for (Pair<Stream>& pair : pairs) {
      while (pair.received < pair.sent) {
        std::size_t got = rt.block_on(pair.server.read(buffer));
        REQUIRE(got > 0);
        check_read(pair, std::span<const std::byte>(buffer).first(got));
      }
      CHECK(pair.received == pair.sent);
      CHECK_FALSE(pair.corrupt);
    }
  }
  rt.block_on(sleep(10ms));  // the ring returns the last cancelled operations
  CHECK(test::open_fds() == fds_before);
}

}  // namespace

TEST_CASE("socket operations destroyed at random points lose no byte and leak no fd, on a current-thread runtime") {
  auto rt = Runtime::current_thread();
  storm<Tcp>(rt, 100'000);
}

TEST_CASE("socket operations destroyed at random points lose no byte and leak no fd, on a multi-thread runtime") {
  auto rt = Runtime::multi_thread(2);
  storm<Tcp>(rt, 100'000);
}

TEST_CASE(
    "Unix stream operations destroyed at random points lose no byte and leak no fd, on a current-thread runtime") {
  auto rt = Runtime::current_thread();
  storm<Unix>(rt, 100'000);
}

TEST_CASE("Unix stream operations destroyed at random points lose no byte and leak no fd, on a multi-thread runtime") {
  auto rt = Runtime::multi_thread(2);
  storm<Unix>(rt, 100'000);
}
