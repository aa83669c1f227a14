// The stream sources, adapters and consumers, one behaviour each: what
// they yield, when they stop polling their source, and what the consumers
// return. The contract every adapter keeps (wake-ups, exceptions,
// destruction) is in stream_adapters.cpp.
#include <doctest/doctest.h>

#include <cstdint>
#include <list>
#include <map>
#include <ranges>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "support.hpp"

using namespace pollux;

namespace {
using Control = std::shared_ptr<test::StreamControl>;

Control source(std::initializer_list<int> items, bool ended = true) {
  auto control = std::make_shared<test::StreamControl>();
  control->items = items;
  control->ended = ended;
  return control;
}

template <class S>
auto poll_next_once(S& stream) {
  Context cx(noop_waker());
  return stream.poll_next(cx);
}

template <class S>
std::vector<item_t<S>> drain(S stream) {
  return block_on(collect(std::move(stream)));
}
}  // namespace

TEST_CASE("iter yields the elements of a container in order and moves them out") {
  std::vector<std::string> words{"a", "bb", "ccc"};
  CHECK(drain(iter(std::move(words))) == std::vector<std::string>{"a", "bb", "ccc"});
}

TEST_CASE("iter over a view borrows: the viewed container keeps its elements") {
  std::vector<std::string> words{"a", "bb"};
  CHECK(drain(iter(std::span<std::string>(words))) == std::vector<std::string>{"a", "bb"});
  CHECK(words == std::vector<std::string>{"a", "bb"});
}

TEST_CASE("iter may be moved before its first poll, also over a container with inline storage") {
  auto s = iter(std::string("xyz"));
  auto moved = std::move(s);
  CHECK(drain(std::move(moved)) == std::vector<char>{'x', 'y', 'z'});
}

TEST_CASE("once yields the output of its future, then ends") {
  auto control = std::make_shared<test::Control>();
  auto s = once(test::ManualFuture(control));
  CHECK(poll_next_once(s).is_pending());
  control->complete(5);
  CHECK(poll_next_once(s).value() == std::optional<int>(5));
  CHECK(poll_next_once(s).value() == std::nullopt);
}

TEST_CASE("range yields the integers from first up to, not including, last") {
  CHECK(drain(range(3, 7)) == std::vector<int>{3, 4, 5, 6});
  CHECK(drain(range(std::uint64_t{0}, std::uint64_t{2})) == std::vector<std::uint64_t>{0, 1});
}

TEST_CASE("range is empty when last is not past first") {
  CHECK(drain(range(5, 5)).empty());
  CHECK(drain(range(5, -5)).empty());
}

TEST_CASE("repeat yields its value for ever, and take bounds it") {
  CHECK(drain(repeat(7) | take(3)) == std::vector<int>{7, 7, 7});
}

TEST_CASE("empty ends at once") { CHECK(drain(empty<int>()).empty()); }

TEST_CASE("unfold threads its state through each step and ends when a step gives nullopt") {
  auto s = unfold(1, [](int n) { return ready_future(n <= 100 ? std::optional(std::pair(n, n * 2)) : std::nullopt); });
  CHECK(drain(std::move(s)) == std::vector<int>{1, 2, 4, 8, 16, 32, 64});
}

TEST_CASE("unfold waits for a pending step before it yields") {
  auto control = std::make_shared<test::Control>();
  auto s = unfold(0, [control](int n) {
    return test::ManualFuture(control)
           | map([n](int v) { return v < 0 ? std::nullopt : std::optional(std::pair(v + n, n + 1)); });
  });
  CHECK(poll_next_once(s).is_pending());
  control->complete(10);
  CHECK(poll_next_once(s).value() == std::optional<int>(10));
  control->value = -1;
  CHECK(poll_next_once(s).value() == std::nullopt);
}

TEST_CASE("poll_fn_stream calls its function for each poll_next") {
  int calls = 0;
  auto s = poll_fn_stream<int>([&calls](Context&) -> Poll<std::optional<int>> {
    if (++calls > 3) return stream_end;
    return ready(calls);
  });
  CHECK(drain(std::move(s)) == std::vector<int>{1, 2, 3});
}

TEST_CASE("map applies its function to each item") {
  CHECK(drain(iter(std::vector{1, 2, 3}) | map([](int x) { return x * 10; })) == std::vector<int>{10, 20, 30});
}

TEST_CASE("then runs the future made from each item before it takes the next") {
  auto control = std::make_shared<test::Control>();
  auto src = source({1, 2});
  auto s = test::ManualStream(src)
           | then([control](int x) { return test::ManualFuture(control) | map([x](int v) { return x + v; }); });
  CHECK(poll_next_once(s).is_pending());
  CHECK(src->items.size() == 1);  // the second item is not taken yet
  control->complete(100);
  CHECK(poll_next_once(s).value() == std::optional<int>(101));
  CHECK(poll_next_once(s).value() == std::optional<int>(102));
}

TEST_CASE("filter keeps the items its predicate accepts") {
  CHECK(drain(iter(std::vector{1, 2, 3, 4, 5}) | filter([](int x) { return x % 2 == 1; }))
        == std::vector<int>{1, 3, 5});
}

TEST_CASE("filter_map yields the values of the optionals and skips the empty ones") {
  auto s = iter(std::vector{1, 2, 3, 4})
           | filter_map([](int x) { return x % 2 == 0 ? std::optional(x * x) : std::nullopt; });
  CHECK(drain(std::move(s)) == std::vector<int>{4, 16});
}

TEST_CASE("take stops polling its source after n items") {
  auto src = source({1, 2, 3}, false);
  auto s = test::ManualStream(src) | take(2);
  CHECK(drain(std::move(s)) == std::vector<int>{1, 2});
  CHECK(src->polls == 2);
}

TEST_CASE("take of zero items never polls its source") {
  auto src = source({1});
  auto s = test::ManualStream(src) | take(0);
  CHECK(drain(std::move(s)).empty());
  CHECK(src->polls == 0);
}

TEST_CASE("take_while ends at the first item its predicate rejects, and polls no further") {
  auto src = source({1, 2, 5, 3}, false);
  auto s = test::ManualStream(src) | take_while([](int x) { return x < 4; });
  CHECK(drain(std::move(s)) == std::vector<int>{1, 2});
  CHECK(src->items.size() == 1);
}

TEST_CASE("skip drops the first n items") {
  CHECK(drain(iter(std::vector{1, 2, 3, 4}) | skip(2)) == std::vector<int>{3, 4});
  CHECK(drain(iter(std::vector{1, 2}) | skip(5)).empty());
}

TEST_CASE("skip_while drops items until its predicate first fails, then checks no more") {
  auto s = iter(std::vector{1, 2, 5, 1, 7}) | skip_while([](int x) { return x < 4; });
  CHECK(drain(std::move(s)) == std::vector<int>{5, 1, 7});
}

TEST_CASE("enumerate pairs each item with its index") {
  auto items = drain(iter(std::vector<std::string>{"a", "b"}) | enumerate());
  REQUIRE(items.size() == 2);
  CHECK(items[1] == std::pair<std::size_t, std::string>(1, "b"));
}

TEST_CASE("chain yields the second stream after the first ended, and not before") {
  auto second = source({3});
  auto s = iter(std::vector{1, 2}) | chain(test::ManualStream(second));
  CHECK(poll_next_once(s).value() == std::optional<int>(1));
  CHECK(poll_next_once(s).value() == std::optional<int>(2));
  CHECK(second->polls == 0);
  CHECK(drain(std::move(s)) == std::vector<int>{3});
}

TEST_CASE("zip pairs the items in step and ends with the shorter stream") {
  auto items = drain(iter(std::vector{1, 2, 3}) | zip(iter(std::vector<std::string>{"a", "b"})));
  CHECK(items == std::vector<std::pair<int, std::string>>{{1, "a"}, {2, "b"}});
}

TEST_CASE("zip keeps an item that came first until its partner comes") {
  auto left = source({1}, false);
  auto right = source({}, false);
  auto s = zip(test::ManualStream(left), test::ManualStream(right));
  CHECK(poll_next_once(s).is_pending());
  CHECK(left->items.empty());  // taken, and held
  right->push(10);
  CHECK(poll_next_once(s).value() == std::optional(std::pair(1, 10)));
}

TEST_CASE("merge alternates between two always-ready streams") {
  auto items = drain(merge(repeat(1), repeat(2)) | take(6));
  CHECK(items == std::vector<int>{1, 2, 1, 2, 1, 2});
}

TEST_CASE("merge ends only when both streams ended") {
  auto a = source({1});
  auto b = source({}, false);
  auto s = merge(test::ManualStream(a), test::ManualStream(b));
  CHECK(poll_next_once(s).value() == std::optional<int>(1));
  CHECK(poll_next_once(s).is_pending());
  b->push(2);
  CHECK(poll_next_once(s).value() == std::optional<int>(2));
  b->end();
  CHECK(poll_next_once(s).value() == std::nullopt);
}

TEST_CASE("merge_variant says by the variant's index which stream an item came from") {
  auto items = drain(merge_variant(iter(std::vector{1, 2}), iter(std::vector<std::string>{"x"})));
  int ints = 0, strings = 0;
  for (auto& item : items) (item.index() == 0 ? ints : strings)++;
  CHECK(ints == 2);
  CHECK(strings == 1);
}

TEST_CASE("merge_variant is fair: each stream that is always ready gets its turn") {
  auto items = drain(merge_variant(repeat(1), repeat(std::string("s")), repeat('c')) | take(9));
  int counts[3] = {};
  for (auto& item : items) ++counts[item.index()];
  CHECK(counts[0] == 3);
  CHECK(counts[1] == 3);
  CHECK(counts[2] == 3);
}

TEST_CASE("merge_variant with for_each is a select loop without a hand-written poll") {
  auto lines = source({}, false);
  auto messages = source({}, false);
  std::vector<std::string> log;
  auto loop = merge_variant(test::ManualStream(lines),
                            test::ManualStream(messages) | map([](int m) { return std::to_string(m); }))
              | for_each([&log](auto item) {
                  if (item.index() == 0)
                    log.push_back("line " + std::to_string(std::get<0>(item)));
                  else
                    log.push_back("message " + std::get<1>(item));
                });
  CHECK(test::poll_once(loop).is_pending());
  messages->push(7);
  lines->push(1);
  CHECK(test::poll_once(loop).is_pending());
  lines->end();
  messages->end();
  CHECK(test::poll_once(loop).is_ready());
  CHECK(log.size() == 2);
}

TEST_CASE("flatten yields the items of each inner stream in turn, skipping empty ones") {
  auto s = iter(std::vector<std::vector<int>>{{1, 2}, {}, {3}})
           | map([](std::vector<int> v) { return iter(std::move(v)); }) | flatten();
  CHECK(drain(std::move(s)) == std::vector<int>{1, 2, 3});
}

TEST_CASE("chunks groups items by n and yields the short last chunk at the end") {
  auto items = drain(iter(std::vector{1, 2, 3, 4, 5}) | chunks(2));
  CHECK(items == std::vector<std::vector<int>>{{1, 2}, {3, 4}, {5}});
}

TEST_CASE("chunks keeps a partly filled chunk while the source is pending") {
  auto src = source({1}, false);
  auto s = test::ManualStream(src) | chunks(2);
  CHECK(poll_next_once(s).is_pending());
  src->push(2);
  CHECK(poll_next_once(s).value() == std::optional(std::vector<int>{1, 2}));
}

TEST_CASE("chunks of zero is a clear error") {
  CHECK_THROWS_AS((void)(iter(std::vector{1}) | chunks(0)), std::invalid_argument);
}

TEST_CASE("a fused stream answers its end again without polling its source") {
  auto src = source({});
  auto s = test::ManualStream(src) | fuse();
  CHECK_FALSE(s.is_terminated());
  CHECK(poll_next_once(s).value() == std::nullopt);
  CHECK(s.is_terminated());
  CHECK(poll_next_once(s).value() == std::nullopt);
  CHECK(src.use_count() == 1);  // the source was released when it ended
}

TEST_CASE("a fused future is Pending after it was Ready, and says it terminated") {
  auto f = ready_future(3) | fuse();
  CHECK(test::poll_once(f).value() == 3);
  CHECK(f.is_terminated());
  CHECK(test::poll_once(f).is_pending());
}

TEST_CASE("select over fused branches can be run again after a branch won") {
  auto a = std::make_shared<test::Control>();
  auto b = std::make_shared<test::Control>();
  auto fa = fuse(test::ManualFuture(a));
  auto fb = fuse(test::ManualFuture(b));
  std::vector<std::size_t> winners;
  for (int round = 0; round < 2; ++round) {
    auto both = select(by_ref(fa), by_ref(fb));
    CHECK(test::poll_once(both).is_pending());
    (round == 0 ? b : a)->complete(round);
    winners.push_back(test::poll_once(both).value().index());
  }
  CHECK(winners == std::vector<std::size_t>{1, 0});
  CHECK(fa.is_terminated());
  CHECK(fb.is_terminated());
}

TEST_CASE("collect gathers into a vector by default and into any container on request") {
  CHECK(block_on(iter(std::vector{3, 1, 3}) | collect()) == std::vector<int>{3, 1, 3});
  CHECK(block_on(iter(std::vector{3, 1, 3}) | collect<std::set<int>>()) == std::set<int>{1, 3});
  CHECK(block_on(iter(std::vector{1, 2}) | collect<std::list<int>>()) == std::list<int>{1, 2});
}

TEST_CASE("fold accumulates every item, with a plain function or one that returns a future") {
  CHECK(block_on(iter(std::vector{1, 2, 3}) | fold(10, [](int acc, int x) { return acc + x; })) == 16);
  auto async_fold = iter(std::vector{1, 2, 3})
                    | fold(std::string(), [](std::string acc, int x) { return ready_future(acc + std::to_string(x)); });
  CHECK(block_on(std::move(async_fold)) == "123");
}

TEST_CASE("fold waits for a pending step before it takes the next item") {
  auto control = std::make_shared<test::Control>();
  auto src = source({1, 2});
  auto f = test::ManualStream(src) | fold(0, [control](int acc, int x) {
             return test::ManualFuture(control) | map([acc, x](int v) { return acc + x + v; });
           });
  CHECK(test::poll_once(f).is_pending());
  CHECK(src->items.size() == 1);
  control->complete(0);
  CHECK(test::poll_once(f).value() == 3);
}

TEST_CASE("for_each calls its function for each item, awaiting it when it returns a future") {
  std::vector<int> seen;
  block_on(iter(std::vector{1, 2}) | for_each([&seen](int x) { seen.push_back(x); }));
  block_on(iter(std::vector{3}) | for_each([&seen](int x) {
             seen.push_back(x);
             return yield_now();
           }));
  CHECK(seen == std::vector<int>{1, 2, 3});
}

TEST_CASE("count counts the items") { CHECK(block_on(iter(std::vector{1, 2, 3}) | count()) == 3); }

TEST_CASE("any and all stop at the first item that decides") {
  auto src = source({1, 5, 2}, false);
  CHECK(block_on(test::ManualStream(src) | any([](int x) { return x > 4; })));
  CHECK(src->items == std::deque<int>{2});
  CHECK_FALSE(block_on(iter(std::vector{1, 5}) | all([](int x) { return x < 4; })));
  CHECK_FALSE(block_on(empty<int>() | any([](int) { return true; })));
  CHECK(block_on(empty<int>() | all([](int) { return false; })));
}

TEST_CASE("a consumer rethrows an exception from its function and may then only be destroyed") {
  auto f = iter(std::vector{1, 2}) | for_each([](int x) {
             if (x == 2) throw std::runtime_error("two");
           });
  CHECK_THROWS_AS((void)test::poll_once(f), std::runtime_error);
}

TEST_CASE("next on a stream loses nothing when it is dropped before it was Ready") {
  auto src = source({}, false);
  test::ManualStream s(src);
  {
    auto n = next(s);
    CHECK(test::poll_once(n).is_pending());
  }
  src->push(4);
  auto n = next(s);
  CHECK(test::poll_once(n).value() == std::optional<int>(4));
}

TEST_CASE("take_until ends the stream once its future is Ready, taking no further item") {
  auto src = source({1, 2}, false);
  auto stop = std::make_shared<test::Control>();
  auto s = test::ManualStream(src) | take_until(test::ManualFuture(stop));
  CHECK(poll_next_once(s).value() == std::optional<int>(1));
  stop->complete(0);
  CHECK(poll_next_once(s).value() == std::nullopt);
  CHECK(s.was_stopped());
  CHECK(src.use_count() == 1);  // the source was released at once
}

TEST_CASE("take_until ends with its source when the future never comes") {
  auto s = iter(std::vector{1, 2}) | take_until(pending_future<int>());
  CHECK(drain(std::move(s)) == std::vector<int>{1, 2});
}

TEST_CASE("try_for_each stops at the first error and takes no further item") {
  auto src = source({1, 2, 3}, false);
  std::vector<int> seen;
  auto f = test::ManualStream(src) | try_for_each([&seen](int x) -> Result<void, std::string> {
             seen.push_back(x);
             if (x == 2) return std::string("two");
             return {};
           });
  auto out = test::poll_once(f);
  REQUIRE(out.is_ready());
  CHECK(out.value().error() == "two");
  CHECK(seen == std::vector<int>{1, 2});
  CHECK(src->items.size() == 1);
}

TEST_CASE("try_for_each succeeds at the end of the stream, awaiting steps that are futures") {
  int sum = 0;
  auto f = iter(std::vector{1, 2, 3}) | try_for_each([&sum](int x) {
             sum += x;
             return yield_now() | map([] { return Result<void, int>(); });
           });
  CHECK(block_on(std::move(f)).has_value());
  CHECK(sum == 6);
}

TEST_CASE("a stream by reference lets an adapter read part of it and leaves the rest") {
  auto s = iter(std::vector{1, 2, 3, 4});
  CHECK(drain(by_ref(s) | take(2)) == std::vector<int>{1, 2});
  CHECK(drain(std::move(s)) == std::vector<int>{3, 4});
}

TEST_CASE("catch_exception turns a future's exception into an error value") {
  auto f = lazy([]() -> int { throw std::runtime_error("bad"); }) | catch_exception();
  auto out = test::poll_once(f).value();
  REQUIRE_FALSE(out.has_value());
  CHECK_THROWS_WITH_AS(std::rethrow_exception(out.error()), "bad", std::runtime_error);
  auto good = ready_future(3) | catch_exception();
  CHECK(test::poll_once(good).value().value() == 3);
}

TEST_CASE("a broadcast receiver as a stream yields each value, Lagged when behind, and ends when closed") {
  auto [tx, rx] = broadcast::channel<int>(2);
  auto s = std::move(rx).into_stream();
  (void)tx.send(1);
  CHECK(poll_next_once(s).value()->value() == 1);
  (void)tx.send(2);
  (void)tx.send(3);
  (void)tx.send(4);  // 2 is gone: the receiver lagged by one
  auto lagged = poll_next_once(s);
  REQUIRE(lagged.value().has_value());
  CHECK(lagged.value()->error().kind == broadcast::RecvError::Kind::Lagged);
  CHECK(poll_next_once(s).value()->value() == 3);
  CHECK(poll_next_once(s).value()->value() == 4);
  test::Probe probe;
  CHECK(s.poll_next(probe.cx).is_pending());
  { auto gone = std::move(tx); }
  CHECK(probe.counts.woken() == 1);
  CHECK(s.poll_next(probe.cx).value() == std::nullopt);
}
