#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

TEST_CASE("block_on returns the output of a ready future") {
  CHECK(block_on(ready_future(7)) == 7);
  block_on(ready_future());
}

TEST_CASE("a wake from another thread wakes block_on") {
  auto control = std::make_shared<test::Control>();
  std::atomic<bool> stored{false};
  auto future = poll_fn<int>([&](Context& cx) -> Poll<int> {
    if (control->value) return ready(*control->value);
    control->waker = cx.waker();
    stored = true;
    return pending;
  });
  std::thread completer([&] {
    while (!stored) std::this_thread::yield();
    // block_on is parked (or about to be): the wake must reach it.
    control->value = 5;
    Waker w = control->waker;
    std::move(w).wake();
  });
  CHECK(block_on(std::move(future)) == 5);
  completer.join();
}

TEST_CASE("block_on parks instead of polling again until it is woken") {
  auto [tx, rx] = oneshot::channel<int>();
  int polls = 0;
  auto counted = poll_fn([&, rx = std::move(rx)](Context& cx) mutable {
    ++polls;
    return rx.poll(cx);
  });
  std::thread sender([tx = std::move(tx)]() mutable {
    std::this_thread::sleep_for(20ms);  // long enough for a busy loop to show
    (void)tx.send(1);
  });
  CHECK(block_on(std::move(counted)) == std::optional<int>(1));
  sender.join();
  CHECK(polls == 2);  // one Pending, one Ready: no poll without a wake
}

TEST_CASE("block_on rethrows the exception of the future") {
  auto failing = lazy([]() -> int { throw std::runtime_error("boom"); });
  CHECK_THROWS_WITH_AS(block_on(std::move(failing)), "boom", std::runtime_error);
}

TEST_CASE("a nested block_on does not swallow the wake of the outer future") {
  auto [tx, rx] = oneshot::channel<int>();
  bool sent = false;
  auto outer = poll_fn([&, tx = std::move(tx), rx = std::move(rx)](Context& cx) mutable -> Poll<Result<int, Closed>> {
    auto result = rx.poll(cx);
    if (result.is_ready()) return result;
    if (!sent) {
      sent = true;
      (void)tx.send(9);       // wakes the outer future's waker: the thread's parker
      block_on(yield_now());  // an inner block_on that parks on the same parker
    }
    return pending;
  });
  CHECK(block_on(std::move(outer)) == std::optional<int>(9));
}
