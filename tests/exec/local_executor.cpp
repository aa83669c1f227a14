#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "support.hpp"

using namespace pollux;

TEST_CASE("block_on returns the output of its future and runs spawned tasks meanwhile") {
  LocalExecutor ex;
  auto handle = ex.spawn(ready_future(20));
  int result = ex.block_on(map(std::move(handle), [](Result<int, Cancelled> x) { return x.value() + 1; }));
  CHECK(result == 21);
}

TEST_CASE("run runs every task to completion in spawn order") {
  LocalExecutor ex;
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) ex.spawn(lazy([&order, i] { order.push_back(i); }));
  ex.run();
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(ex.live_tasks() == 0);
}

TEST_CASE("yield_now puts the task at the back of the queue") {
  LocalExecutor ex;
  std::vector<std::string> order;
  ex.spawn(
      then(lazy([&] { order.push_back("a1"); }), [&] { return map(yield_now(), [&] { order.push_back("a2"); }); }));
  ex.spawn(lazy([&] { order.push_back("b"); }));
  ex.run();
  CHECK(order == std::vector<std::string>{"a1", "b", "a2"});
}

TEST_CASE("pollux::spawn inside a task reaches the executor that runs it") {
  LocalExecutor ex;
  auto result =
      ex.block_on(then(lazy([] { return pollux::spawn(ready_future(4)); }), [](JoinHandle<int> h) { return h; }));
  CHECK(result == 4);
}

TEST_CASE("pollux::spawn outside any executor is refused with a clear message") {
  CHECK_THROWS_WITH_AS(pollux::spawn(ready_future(1)), doctest::Contains("pollux::spawn: called outside any executor"),
                       std::logic_error);
}

TEST_CASE("spawning on a LocalExecutor from another thread is refused") {
  LocalExecutor ex;
  std::string message;
  std::thread other([&] {
    try {
      ex.spawn(ready_future(1));
    } catch (const std::logic_error& e) {
      message = e.what();
    }
  });
  other.join();
  CHECK(message.find("not the executor's") != std::string::npos);
}

TEST_CASE("a wake from another thread reaches a parked LocalExecutor") {
  LocalExecutor ex;
  auto [tx, rx] = oneshot::channel<int>();
  auto handle = ex.spawn(std::move(rx));
  std::thread sender([tx = std::move(tx)]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    (void)tx.send(8);
  });
  CHECK(ex.block_on(std::move(handle)) == std::optional<int>(8));
  sender.join();
}

TEST_CASE("a task's exception reaches block_on through its JoinHandle") {
  LocalExecutor ex;
  auto handle = ex.spawn(lazy([]() -> int { throw std::runtime_error("inner"); }));
  CHECK_THROWS_WITH((void)ex.block_on(std::move(handle)), "inner");
}

TEST_CASE("destroying the executor destroys every pending future and cancels the handles") {
  int drops = 0;
  std::optional<JoinHandle<int>> handle;
  auto [tx, rx] = oneshot::channel<int>();
  {
    LocalExecutor ex;
    handle = ex.spawn(test::PendingWithDrop(&drops));
    ex.spawn(test::PendingWithDrop(&drops));
    ex.spawn(std::move(rx));   // woken from outside after the executor is gone
    ex.block_on(yield_now());  // let them all poll once
    CHECK(ex.live_tasks() == 3);
  }
  CHECK(drops == 2);
  CHECK(tx.is_closed());
  CHECK_FALSE(tx.send(1));
  CHECK(test::is_cancelled(test::poll_once(*handle)));
}

TEST_CASE("a busy task cannot starve a second task on the same thread") {
  LocalExecutor ex;
  std::atomic<bool> other_ran{false};
  // Always finds work ready: each step spends budget, and returns Pending
  // with a self-wake when the budget is gone.
  auto busy = poll_fn<void>([&](Context& cx) -> Poll<void> {
    for (;;) {
      if (other_ran) return ready();
      if (!coop::poll_proceed(cx)) return pending;
    }
  });
  ex.spawn(std::move(busy));
  ex.spawn(lazy([&] { other_ran = true; }));
  ex.run();
  CHECK(other_ran);
}

TEST_CASE("dump lists live tasks with id, name, state, polls and age") {
  LocalExecutor ex;
  auto h = ex.spawn(pending_future<int>(), "waits-forever");
  ex.block_on(yield_now());
  auto tasks = ex.tasks();
  REQUIRE(tasks.size() == 1);
  CHECK(tasks[0].id == h.id());
  CHECK(tasks[0].name == "waits-forever");
  CHECK(tasks[0].state == TaskInfo::State::Idle);
  CHECK(tasks[0].polls == 1);
  std::string text = ex.dump();
  CHECK(text.find("1 live task") != std::string::npos);
  CHECK(text.find("waits-forever") != std::string::npos);
  CHECK(text.find("idle") != std::string::npos);
}

TEST_CASE("1,000,000 tasks spawned and joined on a LocalExecutor") {
  LocalExecutor ex;
  constexpr std::uint64_t n = 1'000'000;
  std::uint64_t sum = ex.block_on(lazy([] {
                                    std::vector<JoinHandle<std::uint64_t>> handles;
                                    handles.reserve(n);
                                    for (std::uint64_t i = 0; i < n; ++i)
                                      handles.push_back(pollux::spawn(ready_future(i)));
                                    return join_all(std::move(handles));
                                  })
                                  | then([](auto joined) { return joined; })
                                  | map([](std::vector<Result<std::uint64_t, Cancelled>> values) {
                                      std::uint64_t s = 0;
                                      for (auto& v : values) s += v.value();
                                      return s;
                                    }));
  CHECK(sum == n * (n - 1) / 2);
  CHECK(ex.live_tasks() == 0);
}

TEST_CASE("a wake storm from four threads loses no wake and never runs a task twice at once") {
  constexpr int tasks = 10000;
  constexpr int wakes_per_thread = 20000;
  struct Slot {
    std::atomic<int> polls{0};
    std::atomic<bool> running{false};
    std::atomic<bool> finish{false};
    test::SharedWakerSlot waker;
  };
  std::vector<Slot> slots(tasks);
  std::atomic<int> overlaps{0}, after_done{0};
  LocalExecutor ex;
  std::vector<JoinHandle<void>> handles;
  for (int i = 0; i < tasks; ++i) {
    Slot& slot = slots[i];
    handles.push_back(
        ex.spawn(poll_fn<void>([&slot, &overlaps, &after_done, done = false](Context& cx) mutable -> Poll<void> {
          if (done) after_done++;
          if (slot.running.exchange(true)) overlaps++;
          slot.polls++;
          slot.waker.store(cx.waker());
          slot.running = false;
          if (slot.finish.load()) {
            done = true;
            return ready();
          }
          return pending;
        })));
  }
  std::atomic<int> threads_done{0};
  std::vector<std::thread> wakers;
  for (int t = 0; t < 4; ++t) {
    wakers.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < wakes_per_thread; ++i) slots[rng() % tasks].waker.wake();
      // The last word: tell every task to finish, then wake it. If any of
      // these wakes were lost, run() below would never return.
      if (++threads_done == 4) {
        for (Slot& slot : slots) {
          slot.finish = true;
          slot.waker.wake();
        }
      }
    });
  }
  ex.run();
  for (auto& t : wakers) t.join();
  CHECK(overlaps == 0);
  CHECK(after_done == 0);
  for (auto& h : handles) CHECK(h.is_finished());
}

TEST_CASE("block_on from inside one of the executor's own tasks is refused") {
  LocalExecutor ex;
  std::string message;
  ex.block_on(lazy([&] {
    try {
      ex.block_on(ready_future());
    } catch (const std::logic_error& e) {
      message = e.what();
    }
  }));
  CHECK(message.find("from inside one of the executor's own tasks") != std::string::npos);
}

TEST_CASE("tasks_within from another thread lists every one of many tasks, though the executor has nothing to run") {
  LocalExecutor ex;
  std::vector<JoinHandle<void>> idle;
  for (int i = 0; i < 10'000; ++i) idle.push_back(ex.spawn(pending_future<void>()));
  auto [tx, rx] = oneshot::channel<std::size_t>();
  std::thread asker([&ex, tx = std::move(tx)]() mutable {
    auto tasks = ex.tasks_within(std::chrono::seconds(30));
    (void)tx.send(tasks ? tasks->size() : 0);
  });
  auto listed = ex.block_on(std::move(rx));  // the executor sleeps but for the asker's wake
  asker.join();
  CHECK(listed.value() == 10'000);
  for (auto& handle : idle) handle.abort();
}

TEST_CASE("tasks that end while a listing in slices passes over them are never read after they are freed") {
  LocalExecutor ex;
  constexpr int kTasks = 20'000;
  std::vector<oneshot::Sender<int>> ends;
  for (int i = 0; i < kTasks; ++i) {
    auto [tx, rx] = oneshot::channel<int>();
    ends.push_back(std::move(tx));
    (void)ex.spawn(std::move(rx) | map([](auto) {}), "ends soon");
  }
  std::atomic<bool> answered{false};
  std::optional<std::vector<TaskInfo>> tasks;
  std::thread asker([&] {
    tasks = ex.tasks_within(std::chrono::seconds(30));
    answered.store(true);
  });
  // End tasks one per turn, in a shuffled order, until the answer came:
  // some end ahead of the listing's cursor, some behind it, some under it.
  std::mt19937 rng(7);
  std::shuffle(ends.begin(), ends.end(), rng);
  ex.block_on(poll_fn<void>([&](Context& cx) -> Poll<void> {
    if (answered.load()) return ready();
    if (!ends.empty()) {
      (void)ends.back().send(1);
      ends.pop_back();
    }
    cx.waker().wake_by_ref();
    return pending;
  }));
  asker.join();
  REQUIRE(tasks);
  CHECK(tasks->size() <= static_cast<std::size_t>(kTasks));
  for (const TaskInfo& task : *tasks) CHECK(task.name == "ends soon");
  ends.clear();
  ex.run();
}

TEST_CASE("while many tasks are listed for another thread, the executor's other tasks keep running between slices") {
  LocalExecutor ex;
  std::vector<JoinHandle<void>> idle;
  for (int i = 0; i < 100'000; ++i) idle.push_back(ex.spawn(pending_future<void>()));
  std::atomic<long> turns{0};
  std::atomic<bool> done{false};
  long during = 0;
  std::thread asker([&] {
    // Once the executor is turning, ask; count the busy task's polls
    // between the ask and the answer. Listed in one go, the answer would
    // come within one batch of polls; in slices of 256 it takes over 390.
    while (turns.load() < 10) std::this_thread::yield();
    long before = turns.load();
    auto tasks = ex.tasks_within(std::chrono::seconds(60));
    during = turns.load() - before;
    CHECK(tasks);
    done.store(true);
  });
  ex.block_on(poll_fn<void>([&](Context& cx) -> Poll<void> {
    if (done.load()) return ready();
    turns.fetch_add(1);
    cx.waker().wake_by_ref();
    return pending;
  }));
  asker.join();
  CHECK(during >= 100'000 / 256 / 2);
  for (auto& handle : idle) handle.abort();
}
