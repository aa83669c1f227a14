// Runtime::turn: a current-thread runtime driven by a loop that is not
// pollux's. Here the loop is poll(2) on wait_fd(), as an Asio io_context's
// reactor would wait on it: timers, sockets and wakes from other threads
// must each make the fd readable, and a loop with nothing to do must sleep.
#include <doctest/doctest.h>

#include <poll.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

RuntimeOptions on_epoll() {
  RuntimeOptions options;
  options.io_backend = IoBackend::Epoll;
  return options;
}

// Turns `rt` until `done()`, sleeping in poll(2) on its wait_fd between
// turns; returns how many times that sleep ended. Fails the test if a
// sleep lasts 10 s (a lost wake).
template <class Done>
int drive(Runtime& rt, Done done) {
  int sleeps = 0;
  while (!done()) {
    if (rt.turn()) continue;
    if (done()) break;
    pollfd fd{rt.wait_fd(), POLLIN, 0};
    int ready = ::poll(&fd, 1, 10'000);
    REQUIRE_MESSAGE(ready == 1, "wait_fd stayed quiet for 10 s: a lost wake");
    ++sleeps;
  }
  return sleeps;
}

}  // namespace

TEST_CASE("a runtime driven by turn runs a sleeping task, waiting on wait_fd until its timer is due") {
  auto rt = Runtime::current_thread(on_epoll());
  REQUIRE(rt.wait_fd() >= 0);
  bool finished = false;
  auto started = std::chrono::steady_clock::now();  // before the sleep is made: its deadline counts from there
  auto handle = rt.spawn(map(sleep(30ms), [&finished] { finished = true; }));
  int sleeps = drive(rt, [&] { return finished; });
  CHECK(std::chrono::steady_clock::now() - started >= 30ms);
  CHECK(sleeps <= 3);  // one wait for the timer, not a spin
}

TEST_CASE("a wake from another thread makes wait_fd readable") {
  auto rt = Runtime::current_thread(on_epoll());
  auto [tx, rx] = oneshot::channel<int>();
  std::optional<int> got;
  auto handle = rt.spawn(map(std::move(rx), [&got](auto value) { got = value.value_or(-1); }));
  while (rt.turn()) {
  }  // until the task waits for the value
  std::thread sender([tx = std::move(tx)]() mutable {
    std::this_thread::sleep_for(20ms);
    (void)tx.send(7);
  });
  drive(rt, [&] { return got.has_value(); });
  sender.join();
  CHECK(got == 7);
}

TEST_CASE("sockets served by a runtime driven by turn echo") {
  auto rt = Runtime::current_thread(on_epoll());
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto server = rt.spawn(test::AcceptAndEcho(listener, 3));
  std::vector<test::PingClient> clients;
  for (int i = 0; i < 3; ++i) clients.emplace_back(listener.local_addr(), i, 5);
  std::optional<std::vector<int>> rounds;
  auto client = rt.spawn(map(join_all(std::move(clients)), [&rounds](std::vector<int> r) { rounds = std::move(r); }));
  drive(rt, [&] { return rounds.has_value(); });
  REQUIRE(rounds->size() == 3);
  for (int r : *rounds) CHECK(r == 5);
}

TEST_CASE("a runtime driven by turn uses no CPU while it waits") {
  auto rt = Runtime::current_thread(on_epoll());
  bool finished = false;
  auto handle = rt.spawn(map(sleep(300ms), [&finished] { finished = true; }));
  double cpu_before = test::process_cpu_ms();
  drive(rt, [&] { return finished; });
  CHECK(test::process_cpu_ms() - cpu_before < 100.0);  // 300 ms of waiting, in poll(2)
}

TEST_CASE("turn returns true while tasks are ready, so the outside loop gets its turn in between") {
  auto rt = Runtime::current_thread(on_epoll());
  int polls = 0;
  auto busy = rt.spawn(poll_fn<void>([&polls](Context& cx) -> Poll<void> {
    if (++polls == 1000) return ready();
    cx.waker().wake_by_ref();
    return pending;
  }));
  int turns = 0;
  while (rt.turn(10)) ++turns;
  CHECK(polls == 1000);
  CHECK(turns >= 99);  // at most 10 tasks a turn
}

TEST_CASE("block_on after turn ends the outside wait and runs as usual") {
  auto rt = Runtime::current_thread(on_epoll());
  auto [tx, rx] = oneshot::channel<int>();
  auto waiting = rt.spawn(std::move(rx));
  while (rt.turn()) {
  }  // the task waits, and so does the runtime, outside
  (void)tx.send(3);
  auto value = rt.block_on(std::move(waiting)).value();
  CHECK(value.value() == 3);
  int turns = 0;
  while (rt.turn()) ++turns;  // nothing left: it waits again, after a turn or two
  CHECK(turns <= 2);
}

TEST_CASE("turn on a multi-thread runtime is a clear error") {
  auto rt = Runtime::multi_thread(1);
  CHECK(rt.wait_fd() == -1);
  CHECK_THROWS_WITH_AS(rt.turn(), doctest::Contains("current-thread"), std::logic_error);
}

TEST_CASE("turn on a runtime whose sockets run on io_uring is a clear error") {
  RuntimeOptions options;
  options.io_backend = IoBackend::Uring;
  auto rt = Runtime::current_thread(options);
  if (rt.io_backend() != IoBackend::Uring) return;  // the kernel refused io_uring: nothing to check
  CHECK(rt.wait_fd() == -1);
  CHECK_THROWS_WITH_AS(rt.turn(), doctest::Contains("epoll"), std::logic_error);
}

TEST_CASE("while a runtime waits outside, a wake from its own thread goes to its outside waker, not to wait_fd") {
  test::Counts counts;  // outlives the runtime, which holds a clone of its waker
  auto rt = Runtime::current_thread(on_epoll());
  rt.set_outside_waker(test::counting_waker(counts));
  auto [tx, rx] = oneshot::channel<int>();
  std::optional<int> got;
  auto handle = rt.spawn(map(std::move(rx), [&got](auto value) { got = value.value_or(-1); }));
  while (rt.turn()) {
  }
  (void)tx.send(5);  // this thread, between turns: an outside loop's handler would do this
  CHECK(counts.woken() == 1);
  pollfd fd{rt.wait_fd(), POLLIN, 0};
  CHECK(::poll(&fd, 1, 0) == 0);  // no eventfd write: the fd stayed quiet
  while (rt.turn()) {
  }
  CHECK(got == 5);
}

TEST_CASE("set_outside_waker on a multi-thread runtime is a clear error") {
  auto rt = Runtime::multi_thread(1);
  CHECK_THROWS_AS(rt.set_outside_waker(std::nullopt), std::logic_error);
}
