// TCP sockets on both runtimes: echo under load, partial writes, resets,
// end of stream, refused connections, cancellation, and no leaked fds.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

void thousand_connections_echo(Runtime rt) {
  REQUIRE_MESSAGE(test::raise_fd_limit(2300), "the hard limit on open files is below the 2,300 this test needs");
  auto listener = TcpListener::bind("127.0.0.1:0");
  constexpr int kConnections = 1000;
  rt.spawn(test::AcceptAndEcho(listener, kConnections));
  std::vector<test::PingClient> clients;
  clients.reserve(kConnections);
  for (int i = 0; i < kConnections; ++i) clients.emplace_back(listener.local_addr(), i, 3);
  std::vector<int> rounds = rt.block_on(join_all(std::move(clients)));
  REQUIRE(rounds.size() == kConnections);
  for (int r : rounds) CHECK(r == 3);
}

std::vector<std::byte> pattern(std::size_t size) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>((i * 7 + i / 4096) & 0xff);
  return bytes;
}

}  // namespace

TEST_CASE("a thousand concurrent connections echo on the current-thread runtime") {
  thousand_connections_echo(Runtime::current_thread());
}

TEST_CASE("a thousand concurrent connections echo on a multi-thread runtime") {
  thousand_connections_echo(Runtime::multi_thread(4));
}

TEST_CASE("a 16 MiB payload written through a small send buffer arrives whole") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  // 64 KiB: smaller and loopback's 64 KiB segments stall for tens of ms
  // in the kernel (a blocking sender does the same), larger and fewer
  // writes are partial.
  int small = 64 << 10;
  REQUIRE(setsockopt(client.native_handle(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small) == 0);
  REQUIRE(setsockopt(server.native_handle(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small) == 0);
  std::vector<std::byte> payload = pattern(16 << 20);

  int waits = 0;  // how often write_all found the send buffer full
  auto write_all = client.write_all(payload);
  auto write_then_close = poll_fn<void>([&, &client = client](Context& cx) -> Poll<void> {
    if (write_all.poll(cx).is_pending()) {
      ++waits;
      return pending;
    }
    client.shutdown(Shutdown::Write);
    return ready();
  });
  auto [_, received] = rt.block_on(join(std::move(write_then_close), test::ReadToEnd(server)));
  CHECK(waits > 10);
  REQUIRE(received.size() == payload.size());
  CHECK(received == payload);
}

TEST_CASE("a peer that resets the connection mid-write makes write_all throw, naming the peer") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  linger abort_on_close{1, 0};  // close sends a reset
  REQUIRE(setsockopt(server.native_handle(), SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof abort_on_close) == 0);
  std::vector<std::byte> payload = pattern(16 << 20);

  auto reset_soon = map(sleep(20ms), [&server = server] { server.close(); });
  try {
    rt.block_on(join(client.write_all(payload), std::move(reset_soon)));
    FAIL("write_all finished although the peer reset the connection");
  } catch (const std::system_error& e) {
    CHECK((e.code() == std::errc::connection_reset || e.code() == std::errc::broken_pipe));
    CHECK(std::string(e.what()).find("pollux::TcpStream::write to " + listener.local_addr().to_string())
          != std::string::npos);
  }
}

TEST_CASE("read gives 0 at the end of the stream") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  rt.block_on(server.write_all(std::string_view("abc")));
  server.shutdown(Shutdown::Write);
  std::array<char, 16> buffer{};
  CHECK(rt.block_on(client.read(buffer)) == 3);
  CHECK(std::string_view(buffer.data(), 3) == "abc");
  CHECK(rt.block_on(client.read(buffer)) == 0);
  CHECK(rt.block_on(client.read(buffer)) == 0);
}

TEST_CASE("read_exact at an early end of stream throws unexpected_eof, saying how much came") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  rt.block_on(server.write_all(std::string_view("abc")));
  server.close();
  std::array<char, 5> buffer{};
  try {
    rt.block_on(client.read_exact(buffer));
    FAIL("read_exact finished without its 5 bytes");
  } catch (const std::system_error& e) {
    CHECK(e.code() == io_errc::unexpected_eof);
    CHECK(std::string(e.what()).find("after 3 of 5 bytes") != std::string::npos);
  }
}

TEST_CASE("connecting to a closed port is refused with an error naming the address") {
  auto rt = Runtime::current_thread();
  SocketAddr closed = TcpListener::bind("127.0.0.1:0").local_addr();  // bound, then closed
  try {
    rt.block_on(TcpStream::connect(closed));
    FAIL("connected to a closed port");
  } catch (const std::system_error& e) {
    CHECK(e.code() == std::errc::connection_refused);
    CHECK(std::string(e.what()).find("pollux::TcpStream::connect to " + closed.to_string()) != std::string::npos);
  }
}

TEST_CASE("binding an address in use fails, naming the address") {
  auto listener = TcpListener::bind("127.0.0.1:0");
  try {
    (void)TcpListener::bind(listener.local_addr());
    FAIL("bound an address in use");
  } catch (const std::system_error& e) {
    CHECK(e.code() == std::errc::address_in_use);
    CHECK(std::string(e.what()).find(listener.local_addr().to_string()) != std::string::npos);
  }
}

TEST_CASE("a read cancelled by a timeout leaves the socket usable") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  std::array<char, 16> buffer{};
  CHECK_FALSE(rt.block_on(timeout(20ms, client.read(buffer))).has_value());

  rt.block_on(server.write_all(std::string_view("hi")));
  CHECK(rt.block_on(client.read(buffer)) == 2);
  CHECK(std::string_view(buffer.data(), 2) == "hi");
}

TEST_CASE("a read destroyed while it waits leaves no waker behind") {
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  test::Probe probe;
  std::array<char, 16> buffer{};
  {
    auto read = client.read(buffer);
    CHECK(read.poll(probe.cx).is_pending());
    CHECK(probe.counts.live() == 2);  // ours, and the clone the socket keeps
  }
  CHECK(probe.counts.live() == 1);  // the read took its clone back

  rt.block_on(server.write_all(std::string_view("late")));  // the event finds no probe.waker to wake
  CHECK(probe.counts.woken() == 0);
  CHECK(rt.block_on(client.read(buffer)) == 4);
}

TEST_CASE("a socket polled outside a runtime throws NoRuntime") {
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto accept = listener.accept();
  CHECK_THROWS_AS((void)test::poll_once(accept), NoRuntime);
}

TEST_CASE("a socket that outlives its runtime throws NoRuntime when polled, and closes cleanly") {
  std::optional<test::Connected> pair;
  auto listener = TcpListener::bind("127.0.0.1:0");
  {
    auto rt = Runtime::current_thread();
    pair.emplace(test::connect_pair(rt, listener));
  }
  std::array<char, 16> buffer{};
  auto read = pair->client.read(buffer);
  CHECK_THROWS_AS((void)test::poll_once(read), NoRuntime);
}

TEST_CASE("sockets that outlive their runtime close on another thread, and the last one closes the epoll instance") {
  // A registered socket holds its reactor, so it deregisters from an epoll
  // instance that is still open, on whichever thread it is destroyed.
  int before = test::open_fds();
  std::optional<TcpListener> listener(TcpListener::bind("127.0.0.1:0"));
  std::optional<test::Connected> pair;
  {
    auto rt = Runtime::multi_thread(2);
    pair.emplace(test::connect_pair(rt, *listener));
  }
  CHECK(test::open_fds() == before + 4);  // the listener, the two streams, and the epoll instance they hold
  std::thread closer([moved = std::move(*pair)]() mutable { test::Connected gone = std::move(moved); });
  closer.join();
  pair.reset();
  CHECK(test::open_fds() == before + 2);  // the listener, still holding the epoll instance
  listener.reset();
  CHECK(test::open_fds() == before);
}

TEST_CASE("no file descriptor is left open after connections, errors and the runtime are gone") {
  int before = test::open_fds();
  REQUIRE(before > 0);
  {
    auto rt = Runtime::multi_thread(2);
    auto listener = TcpListener::bind("127.0.0.1:0");
    rt.spawn(test::AcceptAndEcho(listener, 100));
    std::vector<test::PingClient> clients;
    for (int i = 0; i < 100; ++i) clients.emplace_back(listener.local_addr(), i, 2);
    rt.block_on(join_all(std::move(clients)));
    SocketAddr closed = TcpListener::bind("127.0.0.1:0").local_addr();
    CHECK_THROWS_AS(rt.block_on(TcpStream::connect(closed)), std::system_error);
    CHECK_FALSE(rt.block_on(timeout(1ms, listener.accept())).has_value());
  }
  CHECK(test::open_fds() == before);
}

TEST_CASE("nodelay, local and peer addresses") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  client.set_nodelay(true);
  CHECK(client.nodelay());
  client.set_nodelay(false);
  CHECK_FALSE(client.nodelay());
  CHECK(client.peer_addr() == listener.local_addr());
  CHECK(server.peer_addr() == client.local_addr());
  CHECK(server.local_addr() == listener.local_addr());
}

TEST_CASE("an IPv6 connection echoes") {
  auto rt = Runtime::current_thread();
  std::optional<TcpListener> listener;
  try {
    listener.emplace(TcpListener::bind("[::1]:0"));
  } catch (const std::system_error& e) {
    MESSAGE("no IPv6 loopback here: " << e.what());
    return;
  }
  rt.spawn(test::AcceptAndEcho(*listener, 1));
  CHECK(rt.block_on(test::PingClient(listener->local_addr(), 1, 5)) == 5);
}
