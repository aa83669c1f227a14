// What a dump says about each task beyond its state: the wakers alive
// (every build), and the figures of a library built with
// -Dtask_metrics=true (scripts/test builds clang, asan and tsan that way,
// and plain without, where the figures' tests are skipped and one test
// checks that there are none).
#include <doctest/doctest.h>

#include <chrono>
#include <latch>
#include <thread>

#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

constexpr bool kFigures = detail::kTaskMetrics;

// Runs `ex` until `done()` holds, one turn of its queue at a time.
template <class Done>
void run_until(LocalExecutor& ex, Done done) {
  ex.block_on(poll_fn<void>([&](Context& cx) -> Poll<void> {
    if (done()) return ready();
    cx.waker().wake_by_ref();
    return pending;
  }));
}

TaskInfo only_task(const std::vector<TaskInfo>& tasks) {
  REQUIRE(tasks.size() == 1);
  return tasks[0];
}

bool says(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("a task's wakers are the clones that what it waits on keeps") {
  LocalExecutor ex;
  Waker kept;
  bool done = false;
  ex.spawn(poll_fn<void>([&](Context& cx) -> Poll<void> {
             if (done) return ready();
             kept = cx.waker();
             return pending;
           }),
           "keeps-a-waker");
  ex.block_on(yield_now());
  CHECK(only_task(ex.tasks()).wakers == 1);
  Waker second = kept;
  CHECK(only_task(ex.tasks()).wakers == 2);
  CHECK_FALSE(says(ex.dump(), "warning"));
  second = Waker{};
  done = true;
  std::exchange(kept, Waker{}).wake();
  ex.run();
  CHECK(ex.live_tasks() == 0);
}

TEST_CASE("an idle task with no waker alive is warned about: nothing can wake it") {
  LocalExecutor ex;
  ex.spawn(pending_future<int>(), "waits-forever");
  ex.block_on(yield_now());
  TaskInfo task = only_task(ex.tasks());
  CHECK(task.wakers == 0);
  CHECK(task_warnings(task).size() == 1);
  CHECK(says(ex.dump(), "warning: idle with no waker alive"));
}

TEST_CASE("a queued task's Runnable is not counted as a waker") {
  LocalExecutor ex;
  ex.spawn(ready_future(1), "queued");
  TaskInfo task = only_task(ex.tasks());  // spawned, not yet run
  CHECK(task.state == TaskInfo::State::Scheduled);
  CHECK(task.wakers == 0);
  CHECK(task_warnings(task).empty());  // not idle: it will run
  ex.run();
}

TEST_CASE("a library built without per-task figures reports none" * doctest::skip(kFigures)) {
  LocalExecutor ex;
  ex.spawn(pending_future<int>());
  ex.block_on(yield_now());
  CHECK_FALSE(only_task(ex.tasks()).figures);
  CHECK_FALSE(says(ex.dump(), "busy="));
}

TEST_CASE("wakes by the task itself and by others are counted apart" * doctest::skip(!kFigures)) {
  LocalExecutor ex;
  Waker kept;
  int polls = 0;
  ex.spawn(poll_fn<void>([&](Context& cx) -> Poll<void> {
             ++polls;
             if (polls <= 3) {  // three yields
               cx.waker().wake_by_ref();
               return pending;
             }
             if (polls == 4) {
               kept = cx.waker();
               return pending;
             }
             return ready();
           }),
           "wakes");
  run_until(ex, [&] { return polls == 4; });
  TaskFigures f = only_task(ex.tasks()).figures.value();
  CHECK(f.wakes_by_self == 3);
  CHECK(f.wakes_by_others == 0);
  std::thread([&] { kept.wake_by_ref(); }).join();
  f = only_task(ex.tasks()).figures.value();
  CHECK(f.wakes_by_self == 3);
  CHECK(f.wakes_by_others == 1);
  kept = Waker{};
  ex.run();
  CHECK(polls == 5);
}

TEST_CASE("a slow poll is timed, kept as the longest, and warned about" * doctest::skip(!kFigures)) {
  LocalExecutor ex;
  Waker kept;
  int polls = 0;
  ex.spawn(poll_fn<void>([&](Context& cx) -> Poll<void> {
             if (++polls == 1) std::this_thread::sleep_for(15ms);  // the slow poll under test, not a wait for an event
             kept = cx.waker();
             return pending;
           }),
           "slow");
  run_until(ex, [&] { return polls == 1; });
  kept.wake_by_ref();
  run_until(ex, [&] { return polls == 2; });
  TaskInfo task = only_task(ex.tasks());
  const TaskFigures& f = task.figures.value();
  CHECK(f.longest_poll >= 15ms);
  CHECK(f.busy >= f.longest_poll);
  CHECK(f.current_poll == 0ns);
  CHECK(says(ex.dump(), "warning: a poll took"));
  CHECK(task_warnings(task, TaskWarnings{1h}).empty());  // the threshold is the caller's
}

TEST_CASE("time in the queue after a wake counts as scheduled, not idle" * doctest::skip(!kFigures)) {
  LocalExecutor ex;
  Waker kept;
  int polls = 0;
  ex.spawn(poll_fn<void>([&](Context& cx) -> Poll<void> {
    ++polls;
    kept = cx.waker();
    return pending;
  }));
  std::this_thread::sleep_for(15ms);  // queued since the spawn, not yet polled: the time under test
  run_until(ex, [&] { return polls == 1; });
  TaskFigures f = only_task(ex.tasks()).figures.value();
  CHECK(f.scheduled >= 15ms);
  CHECK(f.busy < f.scheduled);
  kept = Waker{};
}

TEST_CASE("another thread sees a task inside a poll that does not return" * doctest::skip(!kFigures)) {
  ThreadPool pool(1);
  std::latch inside(1);
  std::latch release(1);
  auto handle = pool.spawn(lazy([&] {
                             inside.count_down();
                             release.wait();  // blocks its worker, which is what is under test
                           }),
                           "blocks");
  inside.wait();
  TaskInfo task = only_task(pool.tasks());
  CHECK(task.state == TaskInfo::State::Running);
  CHECK(task.figures.value().current_poll > 0ns);
  std::vector<std::string> warnings = task_warnings(task, TaskWarnings{0ns});
  REQUIRE(warnings.size() == 1);
  CHECK(says(warnings[0], "it never yields"));
  release.count_down();
  CHECK(pool.block_on(std::move(handle)).has_value());
}
