#include <doctest/doctest.h>

#include <array>
#include <string>

#include "support.hpp"

using namespace pollux;

TEST_CASE("join_all over a std::array is ready with a std::array of outputs in input order") {
  auto joined = join_all(std::array{ready_future(std::string("a")), ready_future(std::string("b"))});
  static_assert(std::is_same_v<decltype(joined)::Output, std::array<std::string, 2>>);
  auto result = block_on(std::move(joined));
  CHECK(result == std::array<std::string, 2>{"a", "b"});
}

TEST_CASE("join_all over a std::array of void futures is ready with Units") {
  auto result = block_on(join_all(std::array{ready_future(), ready_future(), ready_future()}));
  CHECK(result == std::array<Unit, 3>{});
}

namespace {
struct NoDefault {
  explicit NoDefault(int v) : value(v) {}
  int value;
};
}  // namespace

TEST_CASE("join_all over a std::array gathers outputs that have no default constructor") {
  auto result = block_on(join_all(std::array{ready_future(NoDefault(7)), ready_future(NoDefault(8))}));
  CHECK(result[0].value == 7);
  CHECK(result[1].value == 8);
}

TEST_CASE("join_all over a std::array polls every unfinished child on each poll and no finished one") {
  auto a = std::make_shared<test::Control>();
  auto b = std::make_shared<test::Control>();
  auto joined = join_all(std::array{test::ManualFuture(a), test::ManualFuture(b)});
  CHECK(test::poll_once(joined).is_pending());
  CHECK(a->polls == 1);
  CHECK(b->polls == 1);
  b->complete(20);
  CHECK(test::poll_once(joined).is_pending());
  CHECK(a->polls == 2);
  CHECK(b->polls == 2);
  a->complete(10);
  auto result = test::poll_once(joined);
  REQUIRE(result.is_ready());
  CHECK(b->polls == 2);  // finished children are not polled again (rule 3)
  CHECK(result.value() == std::array{10, 20});
}

TEST_CASE("join_all over a std::array wakes its task through each child's wake") {
  test::Probe probe;
  auto a = std::make_shared<test::Control>();
  auto b = std::make_shared<test::Control>();
  auto joined = join_all(std::array{test::ManualFuture(a), test::ManualFuture(b)});
  CHECK(joined.poll(probe.cx).is_pending());
  a->complete(1);
  CHECK(probe.counts.woken() == 1);
  b->complete(2);
  CHECK(probe.counts.woken() == 2);
  CHECK(joined.poll(probe.cx).is_ready());
}

TEST_CASE("destroying a join_all over a std::array destroys its unfinished children once") {
  int drops = 0;
  {
    auto joined = join_all(std::array{test::PendingWithDrop(&drops), test::PendingWithDrop(&drops)});
    CHECK(test::poll_once(joined).is_pending());
  }
  CHECK(drops == 2);
}
