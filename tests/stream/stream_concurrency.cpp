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
    for (int i = kCount - 1; i >= 0; --i) (void)senders[i].send(i);  // in reverse: every order is possible
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
  auto f = iter(controls)
           | for_each_concurrent(0, [](std::shared_ptr<test::Control> c) { return test::ManualFuture(std::move(c)); });
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
  CHECK(poll_next_once(map).value() == std::nullopt);  // both ended: the map is empty
  CHECK(map.empty());
}

TEST_CASE("a StreamMap whose last stream ends in a poll ends in that poll") {
  test::Probe probe;
  StreamMap<int, test::ManualStream> map;
  auto control = std::make_shared<test::StreamControl>();
  map.insert(1, test::ManualStream(control));
  CHECK(map.poll_next(probe.cx).is_pending());
  control->end();
  CHECK(probe.counts.woken() == 1);
  CHECK(map.poll_next(probe.cx).value() == std::nullopt);
}

TEST_CASE("a stream inserted into a map whose streams are all pending wakes whoever polled it") {
  test::Probe probe;
  StreamMap<int, test::ManualStream> map;
  auto a = std::make_shared<test::StreamControl>();
  map.insert(1, test::ManualStream(a));
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
  test::Probe probe;
  StreamMap<int, test::ManualStream> map;
  std::vector<std::shared_ptr<test::StreamControl>> controls;
  for (int i = 0; i < 10000; ++i) {
    controls.push_back(std::make_shared<test::StreamControl>());
    map.insert(i, test::ManualStream(controls.back()));
  }
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
  test::Probe probe;
  StreamMap<int, test::ManualStream> map;
  auto a = std::make_shared<test::StreamControl>();
  map.insert(1, test::ManualStream(a));
  CHECK(map.poll_next(probe.cx).is_pending());
  a->push(1);            // queued by its waker...
  CHECK(map.remove(1));  // ...then destroyed while it sits in the queue
  CHECK(a.use_count() == 1);
  CHECK(map.poll_next(probe.cx).value() == std::nullopt);
  CHECK(a->polls == 1);
}

TEST_CASE("a StreamMap destroyed while a stream's wake is queued frees every node") {
  test::Probe probe;
  auto a = std::make_shared<test::StreamControl>();
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
  long sum = rt.block_on(by_ref(map) | take(20000)
                         | fold(0L, [](long acc, std::pair<int, int> item) { return acc + item.second; }));
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

// The collection rule: a collection stream ends while it is empty and yields
// again once something is inserted (tokio-stream's and futures' rule).

TEST_CASE("each collection stream ends while empty and yields again after an insert") {
  StreamMap<int, stream::Iter<std::vector<int>>> map;
  FuturesUnordered<ReadyFuture<int>> unordered;
  FuturesOrdered<ReadyFuture<int>> ordered;
  CHECK(poll_next_once(map).value() == std::nullopt);
  CHECK(poll_next_once(unordered).value() == std::nullopt);
  CHECK(poll_next_once(ordered).value() == std::nullopt);
  map.insert(1, iter(std::vector{7}));
  unordered.push(ready_future(8));
  ordered.push_back(ready_future(9));
  CHECK(poll_next_once(map).value() == std::optional(std::pair(1, 7)));
  CHECK(poll_next_once(unordered).value() == std::optional(8));
  CHECK(poll_next_once(ordered).value() == std::optional(9));
  CHECK(poll_next_once(map).value() == std::nullopt);
  CHECK(poll_next_once(unordered).value() == std::nullopt);
  CHECK(poll_next_once(ordered).value() == std::nullopt);
}

TEST_CASE("a JoinSet that ran empty takes new tasks and yields their outputs") {
  LocalExecutor ex;
  JoinSet<int> set;
  auto sum = ex.block_on(poll_fn<int>([&, sum = 0, round = 0](Context& cx) mutable -> Poll<int> {
    for (;;) {
      auto next = set.poll_next(cx);
      if (next.is_pending()) return pending;
      if (next.value()) {
        sum += next.value()->value();
        continue;
      }
      if (round == 3) return ready(sum);
      ++round;  // empty: refill it, as a loop that spawns on demand does
      set.spawn(ready_future(round * 10));
    }
  }));
  CHECK(sum == 60);
}

TEST_CASE("merge_variant goes on past an empty collection that a step fills") {
  test::Probe probe;
  StreamMap<int, stream::Iter<std::vector<int>>> subscriptions;
  auto commands = std::make_shared<test::StreamControl>();
  commands->items = {1, 2};
  std::vector<std::string> seen;
  auto loop = merge_variant(test::ManualStream(commands), by_ref(subscriptions))
              | for_each([&](std::variant<int, std::pair<int, int>> event) {
                  if (event.index() == 0) {
                    int key = std::get<0>(event);
                    subscriptions.insert(key, iter(std::vector{key * 100}));
                    seen.push_back("command " + std::to_string(key));
                  } else {
                    seen.push_back("item " + std::to_string(std::get<1>(event).second));
                  }
                });
  CHECK(loop.poll(probe.cx).is_pending());  // the map ran empty; the commands stay open
  CHECK(seen == std::vector<std::string>{"command 1", "item 100", "command 2", "item 200"});
  commands->push(3);
  CHECK(loop.poll(probe.cx).is_pending());
  CHECK(seen.back() == "item 300");
  commands->end();
  CHECK(loop.poll(probe.cx).is_ready());  // every other source ended and the map is empty
}

TEST_CASE("merge_variant waits on a collection that holds pending streams after the other sources ended") {
  test::Probe probe;
  StreamMap<int, test::ManualStream> subscriptions;
  auto topic = std::make_shared<test::StreamControl>();
  subscriptions.insert(1, test::ManualStream(topic));
  int items = 0;
  auto loop = merge_variant(empty<int>(), by_ref(subscriptions)) | for_each([&](auto) { ++items; });
  CHECK(loop.poll(probe.cx).is_pending());
  topic->push(5);
  CHECK(probe.counts.woken() == 1);
  CHECK(loop.poll(probe.cx).is_pending());
  CHECK(items == 1);
  topic->end();
  CHECK(loop.poll(probe.cx).is_ready());
}
