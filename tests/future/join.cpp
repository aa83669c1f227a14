#include <doctest/doctest.h>

#include "support.hpp"

using namespace pollux;

TEST_CASE("join is ready with a tuple of outputs in argument order, Unit for void") {
  auto result = block_on(join(ready_future(1), ready_future(), ready_future(std::string("three"))));
  CHECK(std::get<0>(result) == 1);
  CHECK(std::get<1>(result) == Unit{});
  CHECK(std::get<2>(result) == "three");
}

TEST_CASE("join polls every unfinished child on each poll and no finished one") {
  auto a = std::make_shared<test::Control>();
  auto b = std::make_shared<test::Control>();
  auto joined = join(test::ManualFuture(a), test::ManualFuture(b));
  CHECK(test::poll_once(joined).is_pending());
  CHECK(a->polls == 1);
  CHECK(b->polls == 1);
  a->complete(10);
  CHECK(test::poll_once(joined).is_pending());
  CHECK(a->polls == 2);
  CHECK(b->polls == 2);
  b->complete(20);
  auto result = test::poll_once(joined);
  REQUIRE(result.is_ready());
  CHECK(a->polls == 2);  // finished children are not polled again (rule 3)
  CHECK(result.value() == std::tuple(10, 20));
}

TEST_CASE("an exception from a child of join propagates out of poll") {
  auto a = std::make_shared<test::Control>();
  a->throw_on_poll = true;
  auto joined = join(ready_future(1), test::ManualFuture(a));
  CHECK_THROWS_WITH((void)test::poll_once(joined), "child failed");
}

TEST_CASE("destroying a join destroys its unfinished children once") {
  int drops = 0;
  {
    auto joined = join(test::PendingWithDrop(&drops), test::PendingWithDrop(&drops));
    CHECK(test::poll_once(joined).is_pending());
  }
  CHECK(drops == 2);
}
