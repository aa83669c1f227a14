// The task building block, driven by the smallest executor there is: a
// deque of Runnables.
#include <doctest/doctest.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <thread>

#include "death.hpp"
#include "pollux/task/detail/state.hpp"
#include "support.hpp"

using namespace pollux;

namespace {
struct DequeExecutor {
  std::deque<Runnable> queue;
  int schedules = 0;
  auto scheduler() {
    return [this](Runnable r) {
      ++schedules;
      queue.push_back(std::move(r));
    };
  }
  void run_all() {
    while (!queue.empty()) {
      Runnable r = std::move(queue.front());
      queue.pop_front();
      r.run();
    }
  }
};
}  // namespace

TEST_CASE("the task header fits one cache line") { CHECK(sizeof(detail::TaskHeader) <= 64); }

TEST_CASE("a task runs its future and its JoinHandle gives the output") {
  DequeExecutor ex;
  auto [runnable, handle] = make_task(ready_future(7), ex.scheduler());
  CHECK_FALSE(handle.is_finished());
  CHECK(runnable.run());
  CHECK(handle.is_finished());
  CHECK(test::poll_once(handle).value() == 7);
}

TEST_CASE("a wake schedules the task once until it runs again") {
  DequeExecutor ex;
  auto control = std::make_shared<test::Control>();
  auto [runnable, handle] = make_task(test::ManualFuture(control), ex.scheduler());
  CHECK_FALSE(runnable.run());
  Waker waker = control->waker;
  waker.wake_by_ref();
  waker.wake_by_ref();
  Waker(waker).wake();
  CHECK(ex.schedules == 1);
  control->complete(3);  // a fourth wake, still one schedule
  CHECK(ex.schedules == 1);
  ex.run_all();
  CHECK(test::poll_once(handle).value() == 3);
}

TEST_CASE("a wake during the poll reschedules the task after the poll, at the back") {
  DequeExecutor ex;
  auto [first, h1] = make_task(yield_now(), ex.scheduler());
  auto [second, h2] = make_task(ready_future(), ex.scheduler());
  ex.queue.push_back(std::move(first));
  ex.queue.push_back(std::move(second));
  Runnable r = std::move(ex.queue.front());
  ex.queue.pop_front();
  CHECK_FALSE(r.run());         // yield_now woke itself while running
  CHECK(ex.queue.size() == 2);  // requeued behind the second task
  CHECK(ex.queue.back().id() == h1.id());
  ex.run_all();
  CHECK(h1.is_finished());
  CHECK(h2.is_finished());
}

TEST_CASE("wakes after completion do nothing, and wakers outlive the task and its handle") {
  DequeExecutor ex;
  auto control = std::make_shared<test::Control>();
  Waker kept;
  {
    auto [runnable, handle] = make_task(test::ManualFuture(control), ex.scheduler());
    CHECK_FALSE(runnable.run());
    kept = control->waker;
    control->complete(1);
    ex.run_all();
    CHECK(test::poll_once(handle).value() == 1);
  }
  kept.wake_by_ref();  // rule 6: the task is done and its handle gone
  CHECK(ex.queue.empty());
}

TEST_CASE("a task's exception is rethrown by its JoinHandle") {
  DequeExecutor ex;
  auto [runnable, handle] = make_task(lazy([]() -> int { throw std::runtime_error("task failed"); }), ex.scheduler());
  CHECK(runnable.run());
  CHECK_THROWS_WITH_AS((void)test::poll_once(handle), "task failed", std::runtime_error);
}

TEST_CASE("abort of an idle task destroys its future on the executor and the handle gives Cancelled") {
  DequeExecutor ex;
  int drops = 0;
  auto [runnable, handle] = make_task(test::PendingWithDrop(&drops), ex.scheduler());
  CHECK_FALSE(runnable.run());
  handle.abort();
  CHECK(drops == 0);  // not on the aborting thread: the executor runs it
  CHECK(ex.queue.size() == 1);
  ex.run_all();
  CHECK(drops == 1);
  CHECK(handle.is_finished());
  CHECK(test::is_cancelled(test::poll_once(handle)));
}

TEST_CASE("a handle polled after abort but before the executor ran the task waits for the future's destruction") {
  DequeExecutor ex;
  int drops = 0;
  auto [runnable, handle] = make_task(test::PendingWithDrop(&drops), ex.scheduler());
  CHECK_FALSE(runnable.run());
  handle.abort();  // idle: the executor will destroy the future
  test::Probe probe;
  CHECK(handle.poll(probe.cx).is_pending());  // the future still exists: no Cancelled yet
  CHECK_FALSE(handle.is_finished());
  ex.run_all();
  CHECK(drops == 1);
  CHECK(probe.counts.woken() == 1);  // the handle hears of it once the future is gone
  CHECK(handle.is_finished());
  CHECK(test::is_cancelled(handle.poll(probe.cx)));
}

TEST_CASE("Cancelled from a task aborted on another thread comes after its future was destroyed") {
  for (int round = 0; round < 200; ++round) {
    LocalExecutor ex;
    std::atomic<int> drops{0};
    auto handle = ex.spawn(test::PendingWithAtomicDrop(&drops));
    ex.block_on(yield_now());  // the task runs once and goes idle
    std::thread aborter([&handle = handle] { handle.abort(); });
    aborter.join();
    // block_on polls the awaiting future before it drains the inject queue
    // where the abort left the task.
    int drops_seen = -1;
    ex.block_on(poll_fn<void>([&](Context& cx) -> Poll<void> {
      auto polled = handle.poll(cx);
      if (polled.is_pending()) return pending;
      if (!polled.value().has_value()) drops_seen = drops.load();
      return ready();
    }));
    REQUIRE(drops_seen == 1);
  }
}

TEST_CASE("abort during the poll that completes the task loses no output: the handle gets it") {
  DequeExecutor ex;
  int drops = 0;
  JoinHandle<test::DropCounter>* self = nullptr;
  auto [runnable, handle] = make_task(lazy([&] {
                                        self->abort();  // while running: noted, the poll still completes
                                        return test::DropCounter(&drops);
                                      }),
                                      ex.scheduler());
  self = &handle;
  CHECK(runnable.run());
  CHECK(handle.is_finished());
  { auto output = test::poll_once(handle); }
  CHECK(drops == 1);
}

TEST_CASE("abort during a poll that returns Pending destroys the future after that poll") {
  DequeExecutor ex;
  int drops = 0;
  JoinHandle<int>* self = nullptr;
  struct AbortsItself {
    using Output = int;
    JoinHandle<int>** self;
    test::PendingWithDrop inner;
    Poll<int> poll(Context& cx) {
      (*self)->abort();
      return inner.poll(cx);
    }
  };
  auto [runnable, handle] = make_task(AbortsItself{&self, test::PendingWithDrop(&drops)}, ex.scheduler());
  self = &handle;
  CHECK(runnable.run());  // finished: cancelled right after the poll
  CHECK(drops == 1);
  CHECK(test::is_cancelled(test::poll_once(handle)));
}

TEST_CASE("abort after completion leaves the output to the handle") {
  DequeExecutor ex;
  auto [runnable, handle] = make_task(ready_future(5), ex.scheduler());
  CHECK(runnable.run());
  handle.abort();
  CHECK(test::poll_once(handle).value() == 5);
}

TEST_CASE("a handle waiting for a task is woken when it completes") {
  DequeExecutor ex;
  auto control = std::make_shared<test::Control>();
  auto [runnable, handle] = make_task(test::ManualFuture(control), ex.scheduler());
  test::Probe probe;
  CHECK(handle.poll(probe.cx).is_pending());
  CHECK_FALSE(runnable.run());
  control->complete(2);
  ex.run_all();
  CHECK(probe.counts.woken() == 1);
  CHECK(handle.poll(probe.cx).value() == 2);
}

TEST_CASE("a detached task runs to completion and drops its output") {
  DequeExecutor ex;
  int drops = 0;
  {
    auto [runnable, handle] = make_task(lazy([&] { return test::DropCounter(&drops); }), ex.scheduler());
    ex.queue.push_back(std::move(runnable));
  }
  ex.run_all();
  CHECK(drops == 1);
}

TEST_CASE("dropping a Runnable that never ran cancels its task") {
  DequeExecutor ex;
  int drops = 0;
  auto [runnable, handle] = make_task(test::PendingWithDrop(&drops), ex.scheduler());
  { Runnable gone = std::move(runnable); }
  CHECK(drops == 1);
  CHECK(test::is_cancelled(test::poll_once(handle)));
}

TEST_CASE("abort racing completion either gives the output or Cancelled, never both or neither") {
  for (int round = 0; round < 2000; ++round) {
    std::deque<Runnable> queue;
    std::mutex mutex;
    auto schedule = [&](Runnable r) {
      std::lock_guard lock(mutex);
      queue.push_back(std::move(r));
    };
    auto [tx, rx] = oneshot::channel<int>();
    auto [runnable, handle] = make_task(std::move(rx), schedule);
    CHECK_FALSE(runnable.run());
    std::thread aborter([&handle = handle] { handle.abort(); });
    (void)tx.send(round);
    aborter.join();
    for (;;) {
      std::unique_lock lock(mutex);
      if (queue.empty()) break;
      Runnable r = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      r.run();
    }
    REQUIRE(handle.is_finished());
    auto polled = test::poll_once(handle);
    REQUIRE(polled.is_ready());
    if (polled.value().has_value()) CHECK(polled.value().value() == std::optional<int>(round));
  }
}

TEST_CASE("an output whose move throws reaches the handle as that exception, and the future is destroyed once") {
  struct ThrowsOnMove {
    ThrowsOnMove() = default;
    ThrowsOnMove(ThrowsOnMove&&) { throw std::runtime_error("move failed"); }
  };
  struct Source {
    using Output = ThrowsOnMove;
    test::DropCounter counter;
    Poll<ThrowsOnMove> poll(Context&) { return Poll<ThrowsOnMove>(std::in_place); }
  };
  DequeExecutor ex;
  int drops = 0;
  auto [runnable, handle] = make_task(Source{test::DropCounter(&drops)}, ex.scheduler());
  CHECK(runnable.run());
  CHECK(drops == 1);
  CHECK_THROWS_WITH_AS((void)test::poll_once(handle), "move failed", std::runtime_error);
}

TEST_CASE("a task reference count at its limit stops the program with a message instead of wrapping") {
  test::Death death = test::run_in_child([] {
    detail::TaskState state(detail::TaskState::kMaxRefs);
    state.ref_inc();
  });
  CHECK(death.aborted);
  CHECK(death.stderr_text.find("reference count overflowed") != std::string::npos);
}

TEST_CASE("a task reference count just under its limit still takes a clone") {
  detail::TaskState state(detail::TaskState::kMaxRefs - 1);
  state.ref_inc();
  CHECK(state.load().refs() == detail::TaskState::kMaxRefs);
}

#ifndef NDEBUG
TEST_CASE("a transition called outside its precondition stops a debug build, naming the transition") {
  test::Death death = test::run_in_child([] {
    detail::TaskState state(1);  // queued, not running
    (void)state.to_idle();
  });
  CHECK(death.aborted);
  CHECK(death.stderr_text.find("to_idle") != std::string::npos);
}
#endif
