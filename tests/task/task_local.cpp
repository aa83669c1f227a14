// TaskLocal: a value current during each poll of its scope's future, on
// whatever thread polls it, and nowhere else.
#include <doctest/doctest.h>

#include <string>

#include "support.hpp"

using namespace pollux;

namespace {
const TaskLocal<std::string> request_id;
const TaskLocal<int> depth;

// Reads request_id on every poll; Pending `yields` times first.
auto read_on_each_poll(std::vector<std::string>& seen, int yields) {
  return poll_fn<void>([&seen, yields](Context& cx) mutable -> Poll<void> {
    seen.push_back(request_id.get());
    if (yields-- > 0) {
      cx.waker().wake_by_ref();
      return pending;
    }
    return ready();
  });
}
}  // namespace

TEST_CASE("a task-local value is current in every poll of its scope's future") {
  std::vector<std::string> seen;
  block_on(request_id.scope("r1", read_on_each_poll(seen, 2)));
  CHECK(seen == std::vector<std::string>{"r1", "r1", "r1"});
  CHECK_FALSE(request_id.is_set());
}

TEST_CASE("reading a task-local outside any scope is a clear error") {
  CHECK_THROWS_AS(request_id.get(), std::logic_error);
  CHECK_FALSE(request_id.try_with([](std::string& s) { return s.size(); }).has_value());
}

TEST_CASE("two tasks on one thread each see their own task-local value") {
  auto rt = Runtime::current_thread();
  std::vector<std::string> a, b;
  rt.block_on(join(rt.spawn(request_id.scope("a", read_on_each_poll(a, 3))),
                   rt.spawn(request_id.scope("b", read_on_each_poll(b, 3)))));
  CHECK(a == std::vector<std::string>(4, "a"));
  CHECK(b == std::vector<std::string>(4, "b"));
}

TEST_CASE("the innermost scope of a key wins, and the outer one is back after it") {
  auto f = depth.scope(1, then(depth.scope(2, lazy([] { return depth.get(); })),
                               [](int inner) { return ready_future(std::pair(inner, depth.get())); }));
  CHECK(block_on(std::move(f)) == std::pair(2, 1));
}

TEST_CASE("a task-local value follows its task across the threads of a pool") {
  auto rt = Runtime::multi_thread(2);
  std::vector<std::string> seen;
  rt.block_on(rt.spawn(request_id.scope("pool", read_on_each_poll(seen, 50)))).value();
  CHECK(seen == std::vector<std::string>(51, "pool"));
}

TEST_CASE("an exception from the scoped future leaves no task-local value behind") {
  auto f = depth.scope(3, lazy([]() -> int { throw std::runtime_error("boom"); }));
  CHECK_THROWS_AS((void)test::poll_once(f), std::runtime_error);
  CHECK_FALSE(depth.is_set());
}

TEST_CASE("sync_scope makes a value current for a plain call") {
  CHECK(depth.sync_scope(7, [] { return depth.get() * 2; }) == 14);
}
