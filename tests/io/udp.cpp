// UDP sockets, and the reactor's registrations seen from another thread.
#include <doctest/doctest.h>

#include <sys/socket.h>

#include <array>
#include <atomic>
#include <latch>
#include <string>
#include <string_view>
#include <thread>

#include "support.hpp"

using namespace pollux;

TEST_CASE("a datagram goes to its address and the receiver learns the sender") {
  auto rt = Runtime::current_thread();
  auto a = UdpSocket::bind("127.0.0.1:0");
  auto b = UdpSocket::bind("127.0.0.1:0");
  std::array<char, 64> buffer{};
  auto [sent, received] = rt.block_on(join(a.send_to(std::string_view("ping"), b.local_addr()), b.recv_from(buffer)));
  CHECK(sent == 4);
  CHECK(received.first == 4);
  CHECK(std::string_view(buffer.data(), 4) == "ping");
  CHECK(received.second == a.local_addr());

  auto [back, reply] = rt.block_on(join(b.send_to(std::string_view("pong!"), received.second), a.recv_from(buffer)));
  CHECK(back == 5);
  CHECK(reply.first == 5);
  CHECK(std::string_view(buffer.data(), 5) == "pong!");
}

TEST_CASE("a socket registers and is woken while another thread sleeps in the driver") {
  Driver driver;
  std::atomic<bool> stop{false};
  std::thread parker([&] {
    while (!stop.load()) driver.park();
  });
  {
    auto guard = driver.enter();
    auto a = UdpSocket::bind("127.0.0.1:0");
    auto b = UdpSocket::bind("127.0.0.1:0");
    std::array<char, 16> buffer{};
    // recv_from is polled first: it registers and waits; the send then makes
    // the event that the parked thread turns into this thread's wake-up.
    auto [received, sent] = block_on(join(a.recv_from(buffer), b.send_to(std::string_view("hello"), a.local_addr())));
    CHECK(received.first == 5);
    CHECK(sent == 5);
  }
  stop.store(true);
  driver.unpark();
  parker.join();
}

TEST_CASE("a recv_from destroyed while it waits leaves no waker behind") {
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  auto a = UdpSocket::bind("127.0.0.1:0");
  test::Probe probe;
  std::array<char, 16> buffer{};
  {
    auto recv = a.recv_from(buffer);
    CHECK(recv.poll(probe.cx).is_pending());
    CHECK(probe.counts.live() == 2);
  }
  CHECK(probe.counts.live() == 1);
}

TEST_CASE("sockets opened and closed while another thread sleeps in the driver leave the reactor sound") {
  // Events for sockets that close meanwhile reach the parked thread after
  // the close: the registration's generation turns them into no-ops, even
  // once its slot serves a new socket.
  Driver driver;
  std::atomic<bool> stop{false};
  std::thread parker([&] {
    while (!stop.load()) driver.park();
  });
  {
    auto guard = driver.enter();
    auto sender = UdpSocket::bind("127.0.0.1:0");
    for (int i = 0; i < 300; ++i) {
      auto receiver = UdpSocket::bind("127.0.0.1:0");
      std::array<char, 16> buffer{};
      auto recv = receiver.recv_from(buffer);
      (void)test::poll_once(recv);  // registered, and waiting or done
      block_on(sender.send_to(std::string_view("x"), receiver.local_addr()));
    }  // each receiver closes with its datagram's event in flight
    auto a = UdpSocket::bind("127.0.0.1:0");
    std::array<char, 16> buffer{};
    auto [received, sent] =
        block_on(join(a.recv_from(buffer), sender.send_to(std::string_view("last"), a.local_addr())));
    CHECK(received.first == 4);
    CHECK(received.second == sender.local_addr());
    CHECK(sent == 4);
  }
  stop.store(true);
  driver.unpark();
  parker.join();
}

TEST_CASE("two threads polling one socket for the first time at once register it exactly once") {
  Driver driver;
  std::atomic<bool> stop{false};
  std::thread parker([&] {
    while (!stop.load()) driver.park();
  });
  for (int round = 0; round < 1000; ++round) {
    auto socket = UdpSocket::bind("127.0.0.1:0");
    auto peer = UdpSocket::bind("127.0.0.1:0");
    std::latch start(2);
    std::atomic<int> failures{0};
    // A receiver and a sender, each on its own thread, first poll together.
    auto first_poll = [&](bool receive) {
      auto guard = driver.enter();
      std::array<std::byte, 16> buffer{};
      Context cx(noop_waker());
      start.arrive_and_wait();
      try {
        if (receive) {
          (void)socket.poll_recv_from(cx, buffer);
        } else {
          (void)socket.poll_send_to(cx, std::span(buffer).first(1), peer.local_addr());
        }
      } catch (const std::exception& e) {
        INFO(e.what());
        ++failures;
      }
    };
    std::thread a(first_poll, true);
    std::thread b(first_poll, false);
    a.join();
    b.join();
    REQUIRE(failures == 0);
  }
  stop = true;
  driver.unpark();
  parker.join();
}
