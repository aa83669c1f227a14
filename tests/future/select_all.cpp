#include <doctest/doctest.h>

#include <deque>
#include <forward_list>
#include <memory>
#include <ranges>
#include <stdexcept>

#include "support.hpp"

using namespace pollux;

TEST_CASE("select_all gives the value, the index and the rest, the last one in the winner's place") {
  std::vector<std::shared_ptr<test::Control>> controls;
  std::vector<test::ManualFuture> futures;
  for (int i = 0; i < 4; ++i) {
    controls.push_back(std::make_shared<test::Control>());
    futures.emplace_back(controls.back());
  }
  auto selected = select_all(std::move(futures));
  CHECK(test::poll_once(selected).is_pending());
  controls[2]->complete(7);
  auto result = test::poll_once(selected);
  REQUIRE(result.is_ready());
  auto [value, index, rest] = std::move(result).value();
  CHECK(value == 7);
  CHECK(index == 2);
  REQUIRE(rest.size() == 3);
  controls[3]->complete(9);  // the rest go on: the last one moved to index 2
  auto second = block_on(select_all(std::move(rest)));
  CHECK(second.value == 9);
  CHECK(second.index == 2);
  controls[0]->complete(1);  // untouched children keep their places
  CHECK(block_on(select_all(std::move(second.rest))).index == 0);
}

TEST_CASE("select_all of no futures is refused with a clear error") {
  CHECK_THROWS_WITH_AS((void)select_all(std::vector<ReadyFuture<int>>{}),
                       "pollux::select_all: needs at least one future, got none", std::invalid_argument);
}

TEST_CASE("select_all is fair among always-ready futures") {
  int polls = 0, wins_first = 0;
  for (int round = 0; round < 1000; ++round) {
    std::vector<test::AlwaysReady> futures{{0, &polls}, {1, &polls}};
    if (block_on(select_all(std::move(futures))).index == 0) ++wins_first;
  }
  CHECK(wins_first >= 400);
  CHECK(wins_first <= 600);
}

TEST_CASE("select_all takes a range that knows its size, and keeps its order in the rest") {
  std::deque<test::ManualFuture> futures;
  std::vector<std::shared_ptr<test::Control>> controls;
  for (int i = 0; i < 5; ++i) futures.emplace_back(controls.emplace_back(std::make_shared<test::Control>()));
  controls[3]->complete(30);
  auto selected = select_all(std::move(futures));
  auto [value, index, rest] = test::poll_once(selected).value();
  CHECK(value == 30);
  CHECK(index == 3);
  REQUIRE(rest.size() == 4);
  controls[1]->complete(10);
  CHECK(block_on(select_all(std::move(rest))).index == 1);
}

TEST_CASE("select_all takes a range that cannot tell its size") {
  std::forward_list<test::ManualFuture> futures;
  std::vector<std::shared_ptr<test::Control>> controls;
  for (int i = 0; i < 4; ++i) futures.emplace_front(controls.emplace_back(std::make_shared<test::Control>()));
  static_assert(!std::ranges::sized_range<decltype(futures)>);
  controls[1]->complete(7);  // the third of the list: it was pushed at the front
  auto selected = select_all(std::move(futures));
  auto result = test::poll_once(selected);
  REQUIRE(result.is_ready());
  CHECK(result.value().value == 7);
  CHECK(result.value().index == 2);
  CHECK(result.value().rest.size() == 3);
}
