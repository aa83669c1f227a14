// A cancellation storm: 100,000 socket operations (reads, writes, accepts,
// connects), each destroyed at a random point of its life (before its
// first poll, after it, while the kernel holds it, or never), on a
// current-thread and on a multi-thread runtime. The connections that carry
// on must lose no byte and reorder none; at the end no fd is left open and
// (under ASan) no memory. Runs on both backends (io_cancel_storm_epoll).
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

// The byte at position `i` of every connection's stream.
std::byte byte_at(std::uint64_t i) { return static_cast<std::byte>((i * 7 + (i >> 8)) & 0xff); }

struct Pair {
  TcpStream client;
  TcpStream server;
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

void check_read(Pair& pair, std::span<const std::byte> bytes) {
  for (std::byte b : bytes) {
    if (b != byte_at(pair.received++)) pair.corrupt = true;
  }
}

void storm(Runtime& rt, int operations) {
  int fds_before = test::open_fds();
  {
    auto listener = TcpListener::bind("127.0.0.1:0");
    std::vector<Pair> pairs;
    for (int i = 0; i < 8; ++i) {
      auto [client, server] = test::connect_pair(rt, listener);
      pairs.push_back(Pair{std::move(client), std::move(server)});
    }
    std::mt19937 random(12345);
    std::vector<std::byte> chunk(3000);
    std::vector<std::byte> buffer(2000);
    std::size_t spare_accepts = 0;  // connects that completed and wait in the backlog
    for (int op = 0; op < operations; ++op) {
      auto end = static_cast<End>(std::uniform_int_distribution<int>(0, 3)(random));
      Pair& pair = pairs[std::uniform_int_distribution<std::size_t>(0, pairs.size() - 1)(random)];
      int kind = std::uniform_int_distribution<int>(0, 99)(random);
      if (kind < 45) {
        // Keep the unread backlog bounded so that finishing writes finish.
        if (pair.sent - pair.received > 256 * 1024) end = End::OnePoll;
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
        auto connected = drive(rt, TcpStream::connect(listener.local_addr()), end, random);
        if (connected) ++spare_accepts;  // and it closes here
      } else {
        if (end == End::Finish && spare_accepts == 0) end = End::ShortWait;
        auto accepted = drive(rt, listener.accept(), end, random);
        if (accepted && spare_accepts > 0) --spare_accepts;
      }
    }
    // The survivors: every byte written arrives, in order.
    for (Pair& pair : pairs) {
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
  storm(rt, 100'000);
}

TEST_CASE("socket operations destroyed at random points lose no byte and leak no fd, on a multi-thread runtime") {
  auto rt = Runtime::multi_thread(2);
  storm(rt, 100'000);
}
