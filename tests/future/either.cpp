// Either and OneOf: a function whose branches build different futures or
// streams returns one type, without a box; and next() of a stream given by
// value.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "support.hpp"

using namespace pollux;

namespace {
// Two branches, two future types, one return type.
Either<ReadyFuture<int>, Map<ReadyFuture<std::string>, std::size_t (*)(std::string)>> length_or_number(bool text) {
  if (text)
    return map(
        ready_future(std::string("four")), +[](std::string s) { return s.size(); });
  return ready_future(42);
}
}  // namespace

TEST_CASE("an Either of two future types is Ready with the output of the one it holds") {
  auto number = length_or_number(false);
  auto text = length_or_number(true);
  CHECK(number.index() == 0);
  CHECK(text.index() == 1);
  CHECK(test::poll_once(number).value() == 42);
  CHECK(test::poll_once(text).value() == 4);
}

TEST_CASE("an Either is as large as its larger alternative and a tag: it allocates nothing") {
  using E = Either<ReadyFuture<int>, PendingFuture<int>>;
  static_assert(Future<E>);
  static_assert(sizeof(E) <= sizeof(ReadyFuture<int>) + sizeof(PendingFuture<int>) + sizeof(std::size_t));
}

TEST_CASE("an Either polls the waiting alternative again when it is woken") {
  auto control = std::make_shared<test::Control>();
  OneOf<test::ManualFuture, ReadyFuture<int>, PendingFuture<int>> either = test::ManualFuture(control);
  test::Probe probe;
  REQUIRE(either.poll(probe.cx).is_pending());
  control->complete(9);
  CHECK(probe.counts.woken() == 1);
  CHECK(either.poll(probe.cx).value() == 9);
}

TEST_CASE("destroying an Either destroys the alternative it holds, which cancels it") {
  int drops = 0;
  {
    Either<test::PendingWithDrop, ReadyFuture<int>> either = test::PendingWithDrop(&drops);
    CHECK(test::poll_once(either).is_pending());
  }
  CHECK(drops == 1);
}

TEST_CASE("an Either of two stream types yields the items of the one it holds") {
  using E = Either<stream::Iter<std::vector<int>>, stream::Range<int>>;
  static_assert(Stream<E>);
  Runtime rt = Runtime::current_thread();
  E listed = iter(std::vector<int>{5, 6});
  E counted = range(0, 3);
  CHECK(rt.block_on(std::move(listed) | collect<std::vector<int>>()) == std::vector<int>{5, 6});
  CHECK(rt.block_on(std::move(counted) | collect<std::vector<int>>()) == std::vector<int>{0, 1, 2});
}

TEST_CASE("next of a stream given by value owns the stream and is Ready with its first item") {
  Runtime rt = Runtime::current_thread();
  CHECK(rt.block_on(next(range(7, 10))) == 7);
  CHECK(rt.block_on(next(range(0, 0))) == std::nullopt);
}

TEST_CASE("the first of two streams given by value needs no variable") {
  auto [tx, rx] = mpsc::unbounded_channel<int>();
  auto control = std::make_shared<test::StreamControl>();
  auto first = select(next(std::move(rx)), next(test::ManualStream(control)));
  REQUIRE(tx.send(3));
  auto won = test::poll_once(first);
  REQUIRE(won.is_ready());
  REQUIRE(won.value().index() == 0);
  CHECK(std::get<0>(won.value()) == 3);
}
