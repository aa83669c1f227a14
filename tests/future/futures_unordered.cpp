#include <doctest/doctest.h>

#include <thread>

#include "support.hpp"

using namespace pollux;

namespace {
std::vector<std::shared_ptr<test::Control>> controls_of(int n) {
  std::vector<std::shared_ptr<test::Control>> controls;
  for (int i = 0; i < n; ++i) controls.push_back(std::make_shared<test::Control>());
  return controls;
}

template <class S>
auto poll_next_once(S& stream) {
  Context cx(noop_waker());
  return stream.poll_next(cx);
}
}  // namespace

TEST_CASE("an empty FuturesUnordered is a stream that has ended") {
  FuturesUnordered<test::ManualFuture> set;
  auto item = poll_next_once(set);
  REQUIRE(item.is_ready());
  CHECK_FALSE(item.value().has_value());
}

TEST_CASE("FuturesUnordered yields outputs in the order the futures finish") {
  auto controls = controls_of(3);
  FuturesUnordered<test::ManualFuture> set;
  for (auto& c : controls) set.push(test::ManualFuture(c));
  CHECK(poll_next_once(set).is_pending());
  controls[2]->complete(30);
  controls[0]->complete(10);
  CHECK(poll_next_once(set).value() == std::optional<int>(30));
  CHECK(poll_next_once(set).value() == std::optional<int>(10));
  CHECK(poll_next_once(set).is_pending());
  controls[1]->complete(20);
  CHECK(poll_next_once(set).value() == std::optional<int>(20));
  CHECK_FALSE(poll_next_once(set).value().has_value());
}

TEST_CASE("with 10,000 futures and one wake, FuturesUnordered polls exactly one future") {
  auto controls = controls_of(10'000);
  FuturesUnordered<test::ManualFuture> set;
  for (auto& c : controls) set.push(test::ManualFuture(c));
  CHECK(poll_next_once(set).is_pending());
  int polls = 0;
  for (auto& c : controls) polls += c->polls;
  CHECK(polls == 10'000);
  controls[77]->complete(1);
  CHECK(poll_next_once(set).value() == std::optional<int>(1));
  polls = 0;
  for (auto& c : controls) polls += c->polls;
  CHECK(polls == 10'001);
}

TEST_CASE("a future pushed while the set runs is polled on the next poll") {
  FuturesUnordered<ReadyFuture<int>> set;
  set.push(ready_future(1));
  CHECK(poll_next_once(set).value() == std::optional<int>(1));
  set.push(ready_future(2));
  CHECK(poll_next_once(set).value() == std::optional<int>(2));
}

TEST_CASE("destroying a FuturesUnordered destroys its futures, and late wakes are harmless") {
  int drops = 0;
  auto control = std::make_shared<test::Control>();
  {
    FuturesUnordered<BoxFuture<int>> set;
    set.push(boxed(test::PendingWithDrop(&drops)));
    set.push(boxed(test::ManualFuture(control)));
    CHECK(poll_next_once(set).is_pending());
  }
  CHECK(drops == 1);
  control->complete(1);  // wakes a node whose set is gone (rule 6)
}

TEST_CASE("a future that throws leaves the set, and the set goes on") {
  auto controls = controls_of(2);
  controls[0]->throw_on_poll = true;
  FuturesUnordered<test::ManualFuture> set;
  set.push(test::ManualFuture(controls[0]));
  set.push(test::ManualFuture(controls[1]));
  CHECK_THROWS_WITH((void)poll_next_once(set), "child failed");
  CHECK(set.size() == 1);
  controls[1]->complete(5);
  CHECK(poll_next_once(set).value() == std::optional<int>(5));
}

TEST_CASE("FuturesUnordered gathers receivers completed from other threads") {
  constexpr int n = 500;
  FuturesUnordered<oneshot::Receiver<int>> set;
  std::vector<oneshot::Sender<int>> senders;
  for (int i = 0; i < n; ++i) {
    auto [tx, rx] = oneshot::channel<int>();
    senders.push_back(std::move(tx));
    set.push(std::move(rx));
  }
  std::thread sender([&] {
    for (int i = 0; i < n; ++i) (void)senders[i].send(i);
  });
  long sum = 0;
  int count = 0;
  block_on(poll_fn<void>([&](Context& cx) -> Poll<void> {
    for (;;) {
      auto item = set.poll_next(cx);
      if (item.is_pending()) return pending;
      if (!item.value()) return ready();
      sum += item.value()->value();
      ++count;
    }
  }));
  sender.join();
  CHECK(count == n);
  CHECK(sum == long(n) * (n - 1) / 2);
}

TEST_CASE("a FuturesUnordered full of ready futures yields to other tasks") {
  LocalExecutor ex;
  bool other_ran = false;
  int yielded = 0;
  ex.spawn(poll_fn<void>([&, set = FuturesUnordered<ReadyFuture<int>>()](Context& cx) mutable -> Poll<void> {
    for (;;) {
      if (other_ran) return ready();
      set.push(ready_future(1));  // always another ready one
      auto item = set.poll_next(cx);
      if (item.is_pending()) return pending;
      ++yielded;
    }
  }));
  ex.spawn(lazy([&] { other_ran = true; }));
  ex.run();
  CHECK(other_ran);
  CHECK(yielded == coop::kBudgetPerPoll);
}
