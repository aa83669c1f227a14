#include <doctest/doctest.h>

#include "support.hpp"

using namespace pollux;

TEST_CASE("a JoinSet yields every task's output, then nullopt") {
  LocalExecutor ex;
  int sum = ex.block_on(poll_fn<int>([set = std::optional<JoinSet<int>>(), sum = 0](Context& cx) mutable -> Poll<int> {
    if (!set) {
      set.emplace();
      for (int i = 1; i <= 10; ++i) set->spawn(ready_future(i));
    }
    for (;;) {
      auto next = set->join_next().poll(cx);
      if (next.is_pending()) return pending;
      if (!next.value()) return ready(sum);
      sum += *next.value();
    }
  }));
  CHECK(sum == 55);
}

TEST_CASE("a JoinSet rethrows a task's exception and goes on with the others") {
  LocalExecutor ex;
  JoinSet<int> set;
  set.insert(ex.spawn(lazy([]() -> int { throw std::runtime_error("one failed"); })));
  set.insert(ex.spawn(ready_future(2)));
  int ok = 0, failed = 0;
  ex.block_on(poll_fn<void>([&](Context& cx) -> Poll<void> {
    for (;;) {
      try {
        auto next = set.join_next().poll(cx);
        if (next.is_pending()) return pending;
        if (!next.value()) return ready();
        ok += *next.value();
      } catch (const std::runtime_error&) {
        ++failed;
      }
    }
  }));
  CHECK(ok == 2);
  CHECK(failed == 1);
}

TEST_CASE("destroying a JoinSet cancels the tasks still in it") {
  LocalExecutor ex;
  int drops = 0;
  {
    JoinSet<int> set;
    set.insert(ex.spawn(test::PendingWithDrop(&drops)));
    set.insert(ex.spawn(test::PendingWithDrop(&drops)));
    ex.block_on(yield_now());
    CHECK(ex.live_tasks() == 2);
  }
  ex.run();  // the aborted tasks' futures are destroyed on the executor
  CHECK(drops == 2);
  CHECK(ex.live_tasks() == 0);
}
