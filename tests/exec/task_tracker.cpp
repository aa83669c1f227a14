// TaskTracker (tokio-util's): wait() completes once the tracker is closed
// and every tracked future has ended, whatever the order of close, the
// tasks' ends and the first poll of wait(), and stays complete once it saw
// that, through a reopen or a new task; tasks are freed as they end;
// aborts and runtime shutdown count as ends; any executor works.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;
using test::Probe;

TEST_CASE("wait completes once the tracker is closed and every tracked task has ended") {
  auto rt = Runtime::multi_thread(2);
  TaskTracker tracker;
  std::atomic<int> ended{0};
  for (int i = 0; i < 50; ++i) {
    tracker.spawn_on(rt, sleep(std::chrono::milliseconds(i % 10)) | map([&ended] { ++ended; }));
  }
  tracker.close();
  rt.block_on(tracker.wait());
  CHECK(ended == 50);
  CHECK(tracker.is_empty());
}

TEST_CASE("wait polled before any task ends, and before close, is woken by the last end") {
  TaskTracker tracker;
  auto [tx, rx] = oneshot::channel<int>();
  auto tracked = tracker.track_future(std::move(rx));
  Probe probe;
  auto waiting = tracker.wait();
  CHECK(waiting.poll(probe.cx).is_pending());
  tracker.close();
  CHECK(waiting.poll(probe.cx).is_pending());  // closed, but one future is still tracked
  CHECK(tracker.len() == 1);
  (void)tx.send(1);
  CHECK(test::poll_once(tracked).is_ready());
  CHECK(probe.counts.woken() == 0);    // Ready is not the end: the future still exists
  { auto gone = std::move(tracked); }  // the future is destroyed: the task has ended
  CHECK(probe.counts.woken() == 1);
  CHECK(waiting.poll(probe.cx).is_ready());
  CHECK(probe.counts.live() == 1);
}

TEST_CASE("an open tracker with no tasks does not complete wait, and close then does") {
  TaskTracker tracker;
  Probe probe;
  auto waiting = tracker.wait();
  CHECK(waiting.poll(probe.cx).is_pending());
  CHECK(tracker.close());
  CHECK_FALSE(tracker.close());  // closed already
  CHECK(probe.counts.woken() == 1);
  CHECK(waiting.poll(probe.cx).is_ready());
}

TEST_CASE("a wait made on a closed, empty tracker is ready even if the tracker is reopened before its poll") {
  TaskTracker tracker;
  tracker.close();
  Probe probe;
  auto waiting = tracker.wait();
  CHECK(tracker.reopen());
  CHECK(waiting.poll(probe.cx).is_ready());
}

TEST_CASE("a wait notified by close is ready even if the tracker is reopened before the waiting task runs") {
  TaskTracker tracker;
  Probe probe;
  auto waiting = tracker.wait();
  CHECK(waiting.poll(probe.cx).is_pending());
  tracker.close();
  CHECK(probe.counts.woken() == 1);
  CHECK(tracker.reopen());
  CHECK(waiting.poll(probe.cx).is_ready());
}

TEST_CASE("a wait notified by the last task's end is ready even if a new task is tracked before it runs") {
  TaskTracker tracker;
  tracker.close();
  std::optional<TaskTrackerToken> token(tracker.token());
  Probe probe;
  auto waiting = tracker.wait();
  CHECK(waiting.poll(probe.cx).is_pending());
  token.reset();
  CHECK(probe.counts.woken() == 1);
  TaskTrackerToken respawned = tracker.token();
  CHECK(waiting.poll(probe.cx).is_ready());
}

TEST_CASE("a wait made before close and first polled after close and reopen is ready, as tokio-util's") {
  TaskTracker tracker;
  Probe probe;
  auto waiting = tracker.wait();
  tracker.close();
  CHECK(tracker.reopen());
  CHECK(waiting.poll(probe.cx).is_ready());
}

TEST_CASE("a wait made on a reopened tracker stays pending until it closes again") {
  TaskTracker tracker;
  tracker.close();
  CHECK(tracker.reopen());
  Probe probe;
  auto waiting = tracker.wait();
  CHECK(waiting.poll(probe.cx).is_pending());
  tracker.close();
  CHECK(waiting.poll(probe.cx).is_ready());
}

TEST_CASE("a wait destroyed while it waits leaves no waker behind") {
  TaskTracker tracker;
  Probe probe;
  {
    auto waiting = tracker.wait();
    CHECK(waiting.poll(probe.cx).is_pending());
  }
  CHECK(probe.counts.live() == 1);
  tracker.close();
  CHECK(probe.counts.woken() == 0);
}

TEST_CASE("a tracked task is freed when it ends, with no one polling the tracker") {
  auto rt = Runtime::current_thread();
  TaskTracker tracker;
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 500; ++i) tracker.spawn_on(rt, yield_now());
    // Drive the runtime until the tasks ran (each yields once), however
    // slow this machine is: nothing here polls the tracker.
    for (int turns = 0; rt.live_tasks() != 0 && turns < 100000; ++turns) rt.block_on(yield_now());
    CHECK(rt.live_tasks() == 0);
    CHECK(tracker.len() == 0);
  }
}

TEST_CASE("an aborted tracked task counts as ended once its future is destroyed") {
  auto rt = Runtime::multi_thread(2);
  TaskTracker tracker;
  auto handle = tracker.spawn_on(rt, sleep(1h));
  rt.block_on(sleep(2ms));
  CHECK(tracker.len() == 1);
  handle.abort();
  tracker.close();
  rt.block_on(tracker.wait());
  CHECK(tracker.is_empty());
}

TEST_CASE("tasks destroyed by their runtime's shutdown count as ended") {
  TaskTracker tracker;
  {
    auto rt = Runtime::multi_thread(2);
    for (int i = 0; i < 20; ++i) tracker.spawn_on(rt, sleep(1h));
    rt.block_on(sleep(2ms));
    CHECK(tracker.len() == 20);
  }
  CHECK(tracker.len() == 0);
  tracker.close();
  auto waiting = tracker.wait();
  CHECK(test::poll_once(waiting).is_ready());
}

TEST_CASE("tasks spawned from inside a task with spawn are tracked on that task's executor") {
  auto rt = Runtime::multi_thread(2);
  TaskTracker tracker;
  std::atomic<int> ran{0};
  rt.block_on(lazy([&] {
    for (int i = 0; i < 10; ++i) tracker.spawn(lazy([&ran] { ++ran; }));
    return 0;
  }));
  tracker.close();
  rt.block_on(tracker.wait());
  CHECK(ran == 10);
}

TEST_CASE("track_future works on a LocalExecutor and under block_on") {
  LocalExecutor ex;
  TaskTracker tracker;
  auto first = tracker.spawn_on(ex, ready_future(1));
  CHECK(block_on(tracker.track_future(ready_future(2))) == 2);
  CHECK(ex.block_on(std::move(first)) == 1);
  tracker.close();
  ex.block_on(tracker.wait());
  CHECK(tracker.is_empty());
}

TEST_CASE("tasks ending on many threads while wait is polled complete it exactly once they are all gone") {
  for (int round = 0; round < 20; ++round) {
    auto rt = Runtime::multi_thread(2);
    TaskTracker tracker;
    std::atomic<int> ended{0};
    for (int i = 0; i < 200; ++i) tracker.spawn_on(rt, yield_now() | map([&ended] { ++ended; }));
    tracker.close();
    rt.block_on(tracker.wait());
    CHECK(ended == 200);
  }
}
