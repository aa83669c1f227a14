// JoinMap: outputs with their keys in completion order, a key spawned
// again replacing its task, abort by key, destruction aborting the rest,
// and a task's exception (tokio-util's join_map tests, in C++).
#include <doctest/doctest.h>

#include <map>
#include <stdexcept>
#include <string>

#include "support.hpp"

using namespace pollux;

namespace {

// Drains `map` in a task of `ex`: every key with its output (-1: Cancelled).
std::map<std::string, int> drain(LocalExecutor& ex, JoinMap<std::string, int>& map) {
  std::map<std::string, int> out;
  ex.block_on(poll_fn<void>([&](Context& cx) -> Poll<void> {
    for (;;) {
      auto next = map.join_next().poll(cx);
      if (next.is_pending()) return pending;
      if (!next.value()) return ready();
      auto& [key, result] = *next.value();
      out[key] = result ? result.value() : -1;
    }
  }));
  return out;
}

}  // namespace

TEST_CASE("a JoinMap yields each task's output with its key, then nullopt") {
  LocalExecutor ex;
  JoinMap<std::string, int> map;
  for (int i = 0; i < 5; ++i) map.insert("task " + std::to_string(i), ex.spawn(ready_future(i * 10)));
  CHECK(map.size() == 5);
  CHECK(map.contains_key("task 3"));
  auto out = drain(ex, map);
  CHECK(out.size() == 5);
  for (int i = 0; i < 5; ++i) CHECK(out["task " + std::to_string(i)] == i * 10);
  CHECK(map.empty());
  CHECK(!map.contains_key("task 3"));
}

TEST_CASE("spawning under a key in use aborts the old task and reports only the new one") {
  LocalExecutor ex;
  JoinMap<std::string, int> map;
  map.insert("key", ex.spawn(pending_future<int>()));
  map.insert("key", ex.spawn(ready_future(2)));
  CHECK(map.size() == 1);
  auto out = drain(ex, map);
  CHECK(out.size() == 1);
  CHECK(out["key"] == 2);
  CHECK(ex.live_tasks() == 0);  // the replaced task was aborted, not left running
}

TEST_CASE("abort by key gives that key back with Cancelled and leaves the others") {
  LocalExecutor ex;
  JoinMap<std::string, int> map;
  map.insert("stuck", ex.spawn(pending_future<int>()));
  map.insert("done", ex.spawn(ready_future(1)));
  CHECK(map.abort("stuck"));
  CHECK(!map.abort("missing"));
  auto out = drain(ex, map);
  CHECK(out["stuck"] == -1);
  CHECK(out["done"] == 1);
}

TEST_CASE("keys lists the tasks whose output was not taken") {
  LocalExecutor ex;
  JoinMap<std::string, int> map;
  map.insert("a", ex.spawn(pending_future<int>()));
  map.insert("b", ex.spawn(pending_future<int>()));
  auto keys = map.keys();
  std::sort(keys.begin(), keys.end());
  CHECK(keys == std::vector<std::string>{"a", "b"});
}

TEST_CASE("destroying a JoinMap aborts the tasks still in it") {
  LocalExecutor ex;
  {
    JoinMap<std::string, int> map;
    map.insert("a", ex.spawn(pending_future<int>()));
    map.insert("b", ex.spawn(pending_future<int>()));
    CHECK(ex.live_tasks() == 2);
  }
  ex.run();  // runs the aborted tasks to their end
  CHECK(ex.live_tasks() == 0);
}

TEST_CASE("a task's exception is rethrown by join_next, its key leaves the map, and the map goes on") {
  LocalExecutor ex;
  JoinMap<std::string, int> map;
  map.insert("fails", ex.spawn(lazy([]() -> int { throw std::runtime_error("no"); })));
  map.insert("works", ex.spawn(ready_future(3)));
  int thrown = 0;
  std::map<std::string, int> out;
  ex.block_on(poll_fn<void>([&](Context& cx) -> Poll<void> {
    for (;;) {
      try {
        auto next = map.join_next().poll(cx);
        if (next.is_pending()) return pending;
        if (!next.value()) return ready();
        out[next.value()->first] = next.value()->second.value();
      } catch (const std::runtime_error&) {
        ++thrown;
      }
    }
  }));
  CHECK(thrown == 1);
  CHECK(out == std::map<std::string, int>{{"works", 3}});
  CHECK(map.empty());
}

TEST_CASE("a JoinMap taken over by a move keeps its tasks and their keys") {
  LocalExecutor ex;
  JoinMap<std::string, int> first;
  first.insert("k", ex.spawn(ready_future(7)));
  JoinMap<std::string, int> second(std::move(first));
  auto out = drain(ex, second);
  CHECK(out["k"] == 7);
}
