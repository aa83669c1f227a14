#include <doctest/doctest.h>

#include <utility>

#include "support.hpp"

using namespace pollux;

TEST_CASE("ready_future is ready on its first poll, also without a value") {
  auto f = ready_future(std::string("x"));
  auto p = test::poll_once(f);
  REQUIRE(p.is_ready());
  CHECK(p.value() == "x");
  auto v = ready_future();
  CHECK(test::poll_once(v).is_ready());
}

TEST_CASE("pending_future never becomes ready") {
  auto f = pending_future<int>();
  for (int i = 0; i < 3; ++i) CHECK(test::poll_once(f).is_pending());
}

TEST_CASE("poll_fn calls its function on each poll with the caller's context") {
  test::Probe probe;
  int calls = 0;
  auto f = poll_fn<int>([&](Context& c) -> Poll<int> {
    CHECK(c.waker().will_wake(probe.waker));
    if (++calls < 3) return pending;
    return ready(calls);
  });
  CHECK(f.poll(probe.cx).is_pending());
  CHECK(f.poll(probe.cx).is_pending());
  CHECK(f.poll(probe.cx).value() == 3);
}

TEST_CASE("lazy runs its function on the first poll, not before") {
  bool ran = false;
  auto f = lazy([&] {
    ran = true;
    return 4;
  });
  CHECK_FALSE(ran);
  CHECK(test::poll_once(f).value() == 4);
  CHECK(ran);
}

TEST_CASE("yield_now wakes its task once, returns Pending once, then Ready") {
  test::Probe probe;
  auto f = yield_now();
  CHECK(f.poll(probe.cx).is_pending());
  CHECK(probe.counts.woken() == 1);
  CHECK(f.poll(probe.cx).is_ready());
  CHECK(probe.counts.woken() == 1);
}

TEST_CASE("map applies its function to the output once, and handles void") {
  int calls = 0;
  CHECK(block_on(map(ready_future(2),
                     [&](int x) {
                       ++calls;
                       return x * 3;
                     }))
        == 6);
  CHECK(calls == 1);
  CHECK(block_on(map(ready_future(), [] { return 1; })) == 1);
  block_on(map(ready_future(1), [](int) {}));
}

TEST_CASE("map waits for its future and forwards Pending") {
  auto control = std::make_shared<test::Control>();
  auto f = map(test::ManualFuture(control), [](int x) { return x + 1; });
  CHECK(test::poll_once(f).is_pending());
  control->complete(1);
  CHECK(test::poll_once(f).value() == 2);
}

namespace {
// What a future borrows and a function's capture owns, as in
// map(barrier->wait(), [barrier](auto) {}).
struct Owned {
  bool alive = true;
};
// The owner, in the function's capture: ends the Owned when destroyed.
struct Owner {
  explicit Owner(Owned* o) : owned(o) {}
  Owner(Owner&& other) noexcept : owned(std::exchange(other.owned, nullptr)) {}
  ~Owner() {
    if (owned != nullptr) owned->alive = false;
  }
  Owned* owned;
};
// The borrower: a future that, destroyed, records whether the Owned still lived.
struct Borrows {
  using Output = int;
  Borrows(Owned* o, bool* saw) : owned(o), saw_alive(saw) {}
  Borrows(Borrows&& other) noexcept : owned(std::exchange(other.owned, nullptr)), saw_alive(other.saw_alive) {}
  ~Borrows() {
    if (owned != nullptr) *saw_alive = owned->alive;
  }
  Poll<int> poll(Context&) { return pending; }
  Owned* owned;
  bool* saw_alive;
};
}  // namespace

TEST_CASE("map and then destroy their future before their function, so the future may borrow what it keeps") {
  Owned owned;
  bool saw_alive = false;
  {
    auto f = map(Borrows(&owned, &saw_alive), [owner = Owner(&owned)](int x) { return x; });
  }
  CHECK(saw_alive);
  owned.alive = true;
  saw_alive = false;
  {
    auto f = then(Borrows(&owned, &saw_alive), [owner = Owner(&owned)](int x) { return ready_future(x); });
  }
  CHECK(saw_alive);
}

TEST_CASE("then runs the second future made from the first one's output") {
  auto first = std::make_shared<test::Control>();
  auto second = std::make_shared<test::Control>();
  auto f = then(test::ManualFuture(first), [&](int x) {
    CHECK(x == 1);
    return test::ManualFuture(second);
  });
  CHECK(test::poll_once(f).is_pending());
  first->complete(1);
  CHECK(test::poll_once(f).is_pending());  // the second future is polled in the same poll
  CHECK(second->polls == 1);
  second->complete(2);
  CHECK(test::poll_once(f).value() == 2);
}

TEST_CASE("pipe syntax chains map and then") {
  auto f = ready_future(1) | map([](int x) { return x + 1; }) | then([](int x) { return ready_future(x * 10); });
  CHECK(block_on(std::move(f)) == 20);
}

TEST_CASE("by_ref polls the referenced future and leaves it alive when destroyed") {
  auto control = std::make_shared<test::Control>();
  test::ManualFuture future(control);
  {
    auto ref = by_ref(future);
    CHECK(test::poll_once(ref).is_pending());
  }
  control->complete(5);
  CHECK(test::poll_once(future).value() == 5);
}

TEST_CASE("a boxed future polls the future inside and can move after a poll") {
  auto control = std::make_shared<test::Control>();
  BoxFuture<int> box = boxed(test::ManualFuture(control));
  CHECK(test::poll_once(box).is_pending());
  BoxFuture<int> moved = std::move(box);  // the box moves, the future inside does not
  control->complete(8);
  CHECK(test::poll_once(moved).value() == 8);
}

TEST_CASE("boxed futures of different types share one type") {
  std::vector<BoxFuture<int>> futures;
  futures.push_back(boxed(ready_future(1)));
  futures.push_back(boxed(map(ready_future(1), [](int x) { return x + 1; })));
  futures.push_back(boxed(lazy([] { return 3; })));
  CHECK(block_on(join_all(std::move(futures))) == std::vector<int>{1, 2, 3});
}

TEST_CASE("Poll converts from pending and from a ready value of a convertible type") {
  Poll<long> p = ready(3);
  CHECK(p.value() == 3L);
  Poll<std::optional<int>> q = ready(4);
  CHECK(q.value() == std::optional<int>(4));
  Poll<int> r = pending;
  CHECK(r.is_pending());
  auto mapped = Poll<int>(ready(2)).map([](int x) { return x * 2; });
  CHECK(mapped.value() == 4);
}
