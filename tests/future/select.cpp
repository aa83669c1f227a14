#include <doctest/doctest.h>

#include "support.hpp"

using namespace pollux;

TEST_CASE("select is ready with the winner's value at the winner's index") {
  auto result = block_on(select(pending_future<int>(), ready_future(std::string("b")), pending_future<void>()));
  REQUIRE(result.index() == 1);
  CHECK(std::get<1>(result) == "b");
}

TEST_CASE("select is fair: of two always-ready futures each wins about half of 1,000 rounds") {
  int polls_a = 0, polls_b = 0, wins_a = 0;
  for (int round = 0; round < 1000; ++round) {
    auto result = block_on(select(test::AlwaysReady{0, &polls_a}, test::AlwaysReady{1, &polls_b}));
    if (result.index() == 0) ++wins_a;
  }
  CHECK(wins_a >= 400);
  CHECK(wins_a <= 600);
}

TEST_CASE("select_biased polls in argument order, so the first ready future always wins") {
  int polls_a = 0, polls_b = 0;
  for (int round = 0; round < 100; ++round) {
    auto result = block_on(select_biased(test::AlwaysReady{0, &polls_a}, test::AlwaysReady{1, &polls_b}));
    CHECK(result.index() == 0);
  }
  CHECK(polls_b == 0);
}

TEST_CASE("the losers of select are destroyed exactly once, as soon as it completes") {
  int drops = 0;
  auto control = std::make_shared<test::Control>();
  auto selected = select(test::PendingWithDrop(&drops), test::ManualFuture(control), test::PendingWithDrop(&drops));
  CHECK(test::poll_once(selected).is_pending());
  CHECK(drops == 0);
  control->complete(3);
  auto result = test::poll_once(selected);
  REQUIRE(result.is_ready());
  CHECK(std::get<1>(result.value()) == 3);
  CHECK(drops == 2);  // before the Select itself goes
}

TEST_CASE("destroying a pending select destroys every child once") {
  int drops = 0;
  {
    auto selected = select(test::PendingWithDrop(&drops), test::PendingWithDrop(&drops));
    CHECK(test::poll_once(selected).is_pending());
  }
  CHECK(drops == 2);
}

TEST_CASE("an exception from a child of select propagates out of poll") {
  auto control = std::make_shared<test::Control>();
  control->throw_on_poll = true;
  auto selected = select_biased(test::ManualFuture(control), pending_future<int>());
  CHECK_THROWS_WITH((void)test::poll_once(selected), "child failed");
}

TEST_CASE("select over by_ref loses the race without losing the receiver or its value") {
  auto [tx, rx] = oneshot::channel<int>();
  auto lost = block_on(select_biased(ready_future(), by_ref(rx)));
  CHECK(lost.index() == 0);
  (void)tx.send(42);  // sent after rx lost a select: still received
  auto won = block_on(select_biased(by_ref(rx), pending_future<void>()));
  REQUIRE(won.index() == 0);
  CHECK(std::get<0>(won) == std::optional<int>(42));
}

TEST_CASE("select without by_ref drops the losing receiver, and the sender sees it") {
  auto [tx, rx] = oneshot::channel<int>();
  auto result = block_on(select_biased(ready_future(), std::move(rx)));
  CHECK(result.index() == 0);
  CHECK(tx.is_closed());
  CHECK_FALSE(tx.send(1));
}
