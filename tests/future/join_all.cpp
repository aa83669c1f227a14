#include <doctest/doctest.h>

#include <list>
#include <numeric>
#include <forward_list>
#include <thread>

#include "support.hpp"

using namespace pollux;

namespace {
std::vector<std::shared_ptr<test::Control>> make_controls(int n) {
  std::vector<std::shared_ptr<test::Control>> controls;
  for (int i = 0; i < n; ++i) controls.push_back(std::make_shared<test::Control>());
  return controls;
}
std::vector<test::ManualFuture> futures_of(const std::vector<std::shared_ptr<test::Control>>& controls) {
  std::vector<test::ManualFuture> futures;
  for (auto& c : controls) futures.emplace_back(c);
  return futures;
}
int total_polls(const std::vector<std::shared_ptr<test::Control>>& controls) {
  int sum = 0;
  for (auto& c : controls) sum += c->polls;
  return sum;
}
}  // namespace

TEST_CASE("join_all of no futures is ready at once with an empty vector") {
  auto result = block_on(join_all(std::vector<test::ManualFuture>{}));
  CHECK(result.empty());
}

TEST_CASE("join_all keeps input order whatever order the children finish in") {
  auto controls = make_controls(5);
  auto joined = join_all(futures_of(controls));
  CHECK(test::poll_once(joined).is_pending());
  for (int i : {3, 0, 4, 1, 2}) controls[i]->complete(i * 10);
  auto result = test::poll_once(joined);
  REQUIRE(result.is_ready());
  CHECK(result.value() == std::vector<int>{0, 10, 20, 30, 40});
}

TEST_CASE("with 10,000 children and one wake, join_all polls exactly one child") {
  auto controls = make_controls(10'000);
  auto joined = join_all(futures_of(controls));
  CHECK(test::poll_once(joined).is_pending());
  CHECK(total_polls(controls) == 10'000);  // the first poll visits every child once
  controls[4321]->complete(1);
  CHECK(test::poll_once(joined).is_pending());
  CHECK(total_polls(controls) == 10'001);
  CHECK(controls[4321]->polls == 2);
  CHECK(test::poll_once(joined).is_pending());  // no wake, no child poll
  CHECK(total_polls(controls) == 10'001);
}

TEST_CASE("join_all wakes its own waker once for many child wakes between polls") {
  test::Probe probe;
  auto controls = make_controls(3);
  auto joined = join_all(futures_of(controls));
  CHECK(joined.poll(probe.cx).is_pending());
  controls[0]->complete(0);
  controls[1]->complete(1);
  CHECK(probe.counts.woken() == 1);
  CHECK(joined.poll(probe.cx).is_pending());
  controls[2]->complete(2);
  CHECK(probe.counts.woken() == 2);
  CHECK(joined.poll(probe.cx).is_ready());
}

TEST_CASE("join_all gathers outputs of children woken from other threads") {
  constexpr int n = 200;
  std::vector<oneshot::Sender<int>> senders;
  std::vector<oneshot::Receiver<int>> receivers;
  for (int i = 0; i < n; ++i) {
    auto [tx, rx] = oneshot::channel<int>();
    senders.push_back(std::move(tx));
    receivers.push_back(std::move(rx));
  }
  std::thread a([&] {
    for (int i = 0; i < n; i += 2) (void)senders[i].send(i);
  });
  std::thread b([&] {
    for (int i = 1; i < n; i += 2) (void)senders[i].send(i);
  });
  auto result = block_on(join_all(std::move(receivers)));
  a.join();
  b.join();
  for (int i = 0; i < n; ++i) CHECK(result[i] == std::optional<int>(i));
}

TEST_CASE("a child waker outliving its join_all can still be woken and dropped") {
  auto control = std::make_shared<test::Control>();
  {
    std::vector<test::ManualFuture> futures;
    futures.emplace_back(control);
    auto joined = join_all(std::move(futures));
    CHECK(test::poll_once(joined).is_pending());
  }
  control->complete(1);  // rule 6: wakes into a combinator that is gone
  CHECK(control->waker.will_wake(noop_waker()));
}

TEST_CASE("an exception from a child of join_all propagates out of poll") {
  auto controls = make_controls(2);
  controls[1]->throw_on_poll = true;
  auto joined = join_all(futures_of(controls));
  CHECK_THROWS_WITH((void)test::poll_once(joined), "child failed");
}

TEST_CASE("join_all takes any range of futures") {
  std::vector<int> values{1, 2, 3};
  std::vector<ReadyFuture<int>> futures;
  for (int v : values) futures.push_back(ready_future(v));
  std::list<ReadyFuture<int>> as_list(std::make_move_iterator(futures.begin()), std::make_move_iterator(futures.end()));
  CHECK(block_on(join_all(std::move(as_list))) == values);
}

TEST_CASE("join_all takes a range that cannot tell its size") {
  std::forward_list<ReadyFuture<int>> futures;
  for (int v : {9, 4, 1}) futures.push_front(ready_future(v));
  CHECK(block_on(join_all(std::move(futures))) == std::vector<int>{1, 4, 9});
}
