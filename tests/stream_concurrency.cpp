// The stream combinators that run futures together: buffer_unordered,
// buffered, FuturesOrdered, for_each_concurrent and StreamMap: how many
// run at once, the order of their outputs, and their wake-ups, also when
// the futures are completed from other threads.
#include <doctest/doctest.h>

#include <ranges>
#include <set>
#include <thread>

#include "support.hpp"

using namespace pollux;

namespace {
using Controls = std::vector<std::shared_ptr<test::Control>>;

Controls controls_of(int n) {
  Controls controls;
  for (int i = 0; i < n; ++i) controls.push_back(std::make_shared<test::Control>());
  return controls;
}

// A stream of ManualFutures, one per control.
auto futures_of(const Controls& controls) {
  return iter(controls) | map([](std::shared_ptr<test::Control> c) { return test::ManualFuture(std::move(c)); });
}

int started(const Controls& controls) {
  int n = 0;
  for (auto& c : controls) n += c->polls > 0;
  return n;
}

template <class S>
auto poll_next_once(S& stream) {
  Context cx(noop_waker());
  return stream.poll_next(cx);
}
}  // namespace

TEST_CASE("buffer_unordered runs at most n futures at once") {
  auto controls = controls_of(5);
  auto s = futures_of(controls) | buffer_unordered(2);
  CHECK(poll_next_once(s).is_pending());
  CHECK(started(controls) == 2);
  controls[0]->complete(0);
  CHECK(poll_next_once(s).value() == std::optional<int>(0));
  CHECK(poll_next_once(s).is_pending());
  CHECK(started(controls) == 3);
}

TEST_CASE("buffer_unordered yields outputs in the order they finish") {
  auto controls = controls_of(3);
  auto s = futures_of(controls) | buffer_unordered(3);
  CHECK(poll_next_once(s).is_pending());
  controls[2]->complete(2);
  controls[1]->complete(1);
  CHECK(poll_next_once(s).value() == std::optional<int>(2));
  CHECK(poll_next_once(s).value() == std::optional<int>(1));
  controls[0]->complete(0);
  CHECK(poll_next_once(s).value() == std::optional<int>(0));
  CHECK(poll_next_once(s).value() == std::nullopt);
}

TEST_CASE("buffered yields outputs in the stream's order, holding early finishers") {
  auto controls = controls_of(3);
  auto s = futures_of(controls) | buffered(3);
  CHECK(poll_next_once(s).is_pending());
  controls[2]->complete(2);
  controls[1]->complete(1);
  CHECK(poll_next_once(s).is_pending());
  controls[0]->complete(0);
  CHECK(poll_next_once(s).value() == std::optional<int>(0));
  CHECK(poll_next_once(s).value() == std::optional<int>(1));
  CHECK(poll_next_once(s).value() == std::optional<int>(2));
  CHECK(poll_next_once(s).value() == std::nullopt);
}

TEST_CASE("buffered counts a finished output that waits for its turn toward n") {
  auto controls = controls_of(3);
  auto s = futures_of(controls) | buffered(2);
  CHECK(poll_next_once(s).is_pending());
  controls[1]->complete(1);
  CHECK(poll_next_once(s).is_pending());
  CHECK(started(controls) == 2);  // the third waits: the second's output holds a slot
}

TEST_CASE("buffer_unordered and buffered with a limit of zero are a clear error") {
  CHECK_THROWS_AS((void)(futures_of(controls_of(1)) | buffer_unordered(0)), std::invalid_argument);
  CHECK_THROWS_AS((void)(futures_of(controls_of(1)) | buffered(0)), std::invalid_argument);
}

TEST_CASE("buffer_unordered lets a future's exception through and stays usable") {
  auto controls = controls_of(2);
  controls[0]->throw_on_poll = true;
  auto s = futures_of(controls) | buffer_unordered(2);
  CHECK_THROWS_AS((void)poll_next_once(s), std::runtime_error);
  controls[1]->complete(1);
  CHECK(poll_next_once(s).value() == std::optional<int>(1));
}

TEST_CASE("destroying buffer_unordered destroys its running futures and their wakers") {
  test::Probe probe;
  int drops = 0;
  {
    auto s = range(0, 3) | map([&drops](int) { return test::PendingWithDrop(&drops); }) | buffer_unordered(2);
    CHECK(s.poll_next(probe.cx).is_pending());
  }
  CHECK(drops == 2);
  CHECK(probe.counts.live() == 1);
}

TEST_CASE("FuturesOrdered yields in push order and ends when empty") {
  auto controls = controls_of(3);
  FuturesOrdered<test::ManualFuture> queue;
  for (auto& c : controls) queue.push_back(test::ManualFuture(c));
  CHECK(queue.size() == 3);
  controls[1]->complete(1);
  controls[2]->complete(2);
  CHECK(poll_next_once(queue).is_pending());
  controls[0]->complete(0);
  CHECK(block_on(std::move(queue) | collect()) == std::vector<int>{0, 1, 2});
}

TEST_CASE("FuturesOrdered keeps the order across a growth of its ring") {
  auto controls = controls_of(40);
  FuturesOrdered<test::ManualFuture> queue;
  for (auto& c : controls) queue.push_back(test::ManualFuture(c));
  for (int i = 39; i >= 0; --i) controls[i]->complete(i);
  std::vector<int> expected(40);
  for (int i = 0; i < 40; ++i) expected[i] = i;
  CHECK(block_on(std::move(queue) | collect()) == expected);
}

TEST_CASE("buffer_unordered on a thread pool finishes futures completed from another thread") {
  auto rt = Runtime::multi_thread(2);
  constexpr int kCount = 200;
  std::vector<oneshot::Sender<int>> senders;
  std::vector<oneshot::Receiver<int>> receivers;
  for (int i = 0; i < kCount; ++i) {
    auto [tx, rx] = oneshot::channel<int>();
    senders.push_back(std::move(tx));
    receivers.push_back(std::move(rx));
  }
  std::thread completer([&senders] {
    for (int i = kCount - 1; i >= 0; --i) senders[i].send(i);  // in reverse: every order is possible
  });
  long sum = rt.block_on(iter(std::move(receivers)) | buffer_unordered(8)
                         | fold(0L, [](long acc, Result<int, Closed> v) { return acc + v.value_or(-1000000); }));
  completer.join();
  CHECK(sum == long(kCount) * (kCount - 1) / 2);
}

TEST_CASE("for_each_concurrent runs at most limit futures at once and finishes when all did") {
  auto controls = controls_of(4);
  auto f = iter(controls) | for_each_concurrent(2, [](std::shared_ptr<test::Control> c) {
             return test::ManualFuture(std::move(c)) | map([](int) {});
           });
  CHECK(test::poll_once(f).is_pending());
  CHECK(started(controls) == 2);
  controls[1]->complete(1);
  CHECK(test::poll_once(f).is_pending());
  CHECK(started(controls) == 3);
  for (auto& c : controls) c->complete(0);
  CHECK(test::poll_once(f).is_ready());
}

TEST_CASE("for_each_concurrent with no limit starts every future at once") {
  auto controls = controls_of(5);
  auto f = iter(controls) | for_each_concurrent(0, [](std::shared_ptr<test::Control> c) {
             return test::ManualFuture(std::move(c));
           });
  CHECK(test::poll_once(f).is_pending());
  CHECK(started(controls) == 5);
}

TEST_CASE("a StreamMap yields each item with its stream's key and drops streams that ended") {
  StreamMap<std::string, stream::Iter<std::vector<int>>> map;
  map.insert("a", iter(std::vector{1, 2}));
  map.insert("b", iter(std::vector{3}));
  std::multiset<std::pair<std::string, int>> seen;
  for (int i = 0; i < 3; ++i) seen.insert(*poll_next_once(map).value());
  CHECK(seen == std::multiset<std::pair<std::string, int>>{{"a", 1}, {"a", 2}, {"b", 3}});
  CHECK(poll_next_once(map).is_pending());
  CHECK(map.empty());
}

TEST_CASE("an empty StreamMap is pending, and an insert wakes whoever polled it") {
  StreamMap<int, test::ManualStream> map;
  test::Probe probe;
  CHECK(map.poll_next(probe.cx).is_pending());
  auto control = std::make_shared<test::StreamControl>();
  control->items = {9};
  map.insert(1, test::ManualStream(control));
  CHECK(probe.counts.woken() == 1);
  CHECK(map.poll_next(probe.cx).value() == std::optional(std::pair(1, 9)));
}

TEST_CASE("a stream inserted into a map whose streams are all pending wakes whoever polled it") {
  StreamMap<int, test::ManualStream> map;
  auto a = std::make_shared<test::StreamControl>();
  map.insert(1, test::ManualStream(a));
  test::Probe probe;
  CHECK(map.poll_next(probe.cx).is_pending());
  auto b = std::make_shared<test::StreamControl>();
  b->items = {5};
  map.insert(2, test::ManualStream(b));
  CHECK(probe.counts.woken() == 1);
  CHECK(map.poll_next(probe.cx).value() == std::optional(std::pair(2, 5)));
}

TEST_CASE("a StreamMap removes and replaces streams by key") {
  StreamMap<int, test::ManualStream> map;
  auto a = std::make_shared<test::StreamControl>();
  auto b = std::make_shared<test::StreamControl>();
  CHECK_FALSE(map.insert(1, test::ManualStream(a)));
  CHECK(map.insert(1, test::ManualStream(b)));  // the old one is destroyed
  CHECK(a.use_count() == 1);
  CHECK(map.size() == 1);
  CHECK(map.contains(1));
  CHECK(map.remove(1));
  CHECK(b.use_count() == 1);
  CHECK_FALSE(map.remove(1));
}

TEST_CASE("a wake of one stream among 10,000 in a StreamMap polls that stream alone") {
  StreamMap<int, test::ManualStream> map;
  std::vector<std::shared_ptr<test::StreamControl>> controls;
  for (int i = 0; i < 10000; ++i) {
    controls.push_back(std::make_shared<test::StreamControl>());
    map.insert(i, test::ManualStream(controls.back()));
  }
  test::Probe probe;
  CHECK(map.poll_next(probe.cx).is_pending());  // the first poll visits each new stream once
  for (auto& c : controls) CHECK(c->polls == 1);
  controls[4321]->push(7);
  CHECK(probe.counts.woken() == 1);
  CHECK(map.poll_next(probe.cx).value() == std::optional(std::pair(4321, 7)));
  CHECK(map.poll_next(probe.cx).is_pending());  // it may have had more: it is polled once again
  int polled_again = 0;
  for (auto& c : controls) polled_again += c->polls > 1;
  CHECK(polled_again == 1);
  CHECK(controls[4321]->polls == 3);
}

TEST_CASE("a stream removed from a StreamMap after its wake is never polled again") {
  StreamMap<int, test::ManualStream> map;
  auto a = std::make_shared<test::StreamControl>();
  map.insert(1, test::ManualStream(a));
  test::Probe probe;
  CHECK(map.poll_next(probe.cx).is_pending());
  a->push(1);  // queued by its waker...
  CHECK(map.remove(1));  // ...then destroyed while it sits in the queue
  CHECK(a.use_count() == 1);
  CHECK(map.poll_next(probe.cx).is_pending());
  CHECK(a->polls == 1);
}

TEST_CASE("a StreamMap destroyed while a stream's wake is queued frees every node") {
  auto a = std::make_shared<test::StreamControl>();
  test::Probe probe;
  {
    StreamMap<int, test::ManualStream> map;
    map.insert(1, test::ManualStream(a));
    CHECK(map.poll_next(probe.cx).is_pending());
    a->push(1);
  }
  CHECK(a.use_count() == 1);
  CHECK(probe.counts.live() == 1);
}

TEST_CASE("a stream woken from another thread while its StreamMap polls is never lost") {
  auto rt = Runtime::multi_thread(2);
  auto [tx, rx] = mpsc::unbounded_channel<int>();
  StreamMap<int, mpsc::Receiver<int>> map;
  map.insert(0, std::move(rx));
  std::thread producer([tx = std::move(tx)] {
    for (int i = 0; i < 20000; ++i) REQUIRE(tx.send(i));
  });
  long sum = rt.block_on(by_ref(map) | take(20000) | fold(0L, [](long acc, std::pair<int, int> item) {
                           return acc + item.second;
                         }));
  producer.join();
  CHECK(sum == 20000L * 19999 / 2);
}

TEST_CASE("a StreamMap is fair: a stream that is always ready does not starve the others") {
  StreamMap<int, stream::Repeat<int>> map;
  map.insert(1, repeat(1));
  map.insert(2, repeat(2));
  int counts[3] = {};
  for (int i = 0; i < 10; ++i) ++counts[poll_next_once(map).value()->second];
  CHECK(counts[1] == 5);
  CHECK(counts[2] == 5);
}
