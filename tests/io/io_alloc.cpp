// Counts heap allocations: socket I/O (reads, writes, waits, wake-ups) and
// the reactor's registrations allocate nothing once its first page of
// registrations exists.
#include <doctest/doctest.h>

#include <array>
#include <optional>
#include <string_view>

#include "alloc_support.hpp"
#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;

using test::allocations_of;

TEST_CASE("echo round trips through the reactor allocate nothing") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  rt.spawn(test::EchoServe(std::move(server)));
  std::array<std::byte, 64> message{}, echo{};
  auto round_trip = [&client = client, &message, &echo](int) {
    return join(client.write_all(message), client.read_exact(echo));
  };
  (void)allocations_of(rt, 10, round_trip);  // warm-up
  CHECK(allocations_of(rt, 1000, round_trip) == 0);
}

TEST_CASE("connecting, accepting and closing allocate nothing once registrations are recycled") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto connect_accept = [&](int) { return join(TcpStream::connect(listener.local_addr()), listener.accept()); };
  (void)allocations_of(rt, 10, connect_accept);  // the reactor's first page of registrations
  CHECK(allocations_of(rt, 200, connect_accept) == 0);
}
