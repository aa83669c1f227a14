#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

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
      sum += next.value()->value();
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
        ok += next.value()->value();
      } catch (const std::runtime_error&) {
        ++failed;
      }
    }
  }));
  CHECK(ok == 2);
  CHECK(failed == 1);
}

TEST_CASE("after abort_all a JoinSet yields Cancelled for each unfinished task and the output of a finished one") {
  LocalExecutor ex;
  JoinSet<int> set;
  set.insert(ex.spawn(ready_future(7)));
  set.insert(ex.spawn(pending_future<int>()));
  set.insert(ex.spawn(pending_future<int>()));
  ex.block_on(yield_now());  // the first finished, the other two wait
  set.abort_all();
  int outputs = 0, cancelled = 0;
  while (auto next = ex.block_on(set.join_next())) {
    if (next->has_value()) {
      CHECK(next->value() == 7);
      ++outputs;
    } else {
      CHECK_THROWS_WITH_AS(next->value(), doctest::Contains("was cancelled before it finished"), std::logic_error);
      ++cancelled;
    }
  }
  CHECK(outputs == 1);
  CHECK(cancelled == 2);
  CHECK(ex.live_tasks() == 0);
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

TEST_CASE("a JoinSet merged into an event loop yields task results and does not end the loop while empty") {
  LocalExecutor ex;
  JoinSet<int> tasks;
  auto [tx, rx] = mpsc::unbounded_channel<int>();
  std::vector<std::string> events;
  auto loop =
      merge_variant(std::move(rx), by_ref(tasks)) | for_each([&](std::variant<int, Result<int, Cancelled>> event) {
        if (event.index() == 0) {  // a request: its work runs as a task of its own
          int n = std::get<0>(event);
          tasks.spawn(lazy([n] { return n * n; }));
          events.push_back("request " + std::to_string(n));
        } else {
          events.push_back("result " + std::to_string(std::get<1>(event).value()));
        }
      });
  auto handle = ex.spawn(std::move(loop));
  // Lets the loop and the tasks it spawned run: a few turns of the executor.
  auto settle = [&] { (void)ex.block_on(range(0, 8) | then([](int) { return yield_now(); }) | count()); };
  settle();  // the set is empty and the channel open: the loop waits
  CHECK_FALSE(handle.is_finished());
  (void)tx.send(3);
  settle();
  (void)tx.send(4);
  settle();
  CHECK(events == std::vector<std::string>{"request 3", "result 9", "request 4", "result 16"});
  { auto gone = std::move(tx); }  // no more requests, and no task left: the loop ends
  settle();
  CHECK(handle.is_finished());
}
