// Debug builds stop a future polled after Ready (rule 3), moved after its
// first poll (rule 4), or Pending with no waker kept anywhere (rule 2), with
// a message naming its type. Each case runs the violation in a child
// process and reads what it printed before it aborted.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <cstdlib>
#include <functional>
#include <optional>
#include <memory>
#include <thread>

#include "death.hpp"
#include "support.hpp"

using namespace pollux;
using test::Death;
using test::run_in_child;

namespace {
template <class F>
void poll_twice(F future) {
  (void)test::poll_once(future);
  (void)test::poll_once(future);
}
}  // namespace

#ifndef NDEBUG
TEST_CASE("a ready_future polled after Ready stops with its type in the message") {
  Death death = run_in_child([] { poll_twice(ready_future(1)); });
  INFO(death.stderr_text);
  CHECK(death.aborted);
  CHECK(death.stderr_text.find("pollux::ReadyFuture<int>") != std::string::npos);
  CHECK(death.stderr_text.find("polled again after it returned Ready") != std::string::npos);
}

TEST_CASE("a map polled after Ready names the Map type") {
  Death death = run_in_child([] { poll_twice(map(ready_future(1), [](int x) { return x; })); });
  CHECK(death.aborted);
  CHECK(death.stderr_text.find("pollux::Map<pollux::ReadyFuture<int>") != std::string::npos);
}

TEST_CASE("join, join_all, select and a oneshot receiver polled after Ready each stop") {
  CHECK(run_in_child([] { poll_twice(join(ready_future(1))); }).aborted);
  CHECK(run_in_child([] {
          std::vector<ReadyFuture<int>> v;
          v.push_back(ready_future(1));
          poll_twice(join_all(std::move(v)));
        }).aborted);
  CHECK(run_in_child([] { poll_twice(select(ready_future(1))); }).aborted);
  CHECK(run_in_child([] {
          auto [tx, rx] = oneshot::channel<int>();
          (void)tx.send(1);
          poll_twice(std::move(rx));
        }).aborted);
}

// The commonest bug in a hand-written future: Pending without storing the
// waker. The task could never run again.
struct ForgetsWaker {
  using Output = int;
  Poll<int> poll(Context&) { return pending; }
};

TEST_CASE("a task that returns Pending and keeps no waker is reported once with its id, name and type") {
  Death death = run_in_child([] {
    LocalExecutor ex;
    auto handle = ex.spawn(ForgetsWaker{}, "forgetful");
    ex.block_on(yield_now());
    ex.block_on(yield_now());
  });
  INFO(death.stderr_text);
  CHECK_FALSE(death.aborted);  // it may be a task that waits only to be cancelled
  CHECK(death.stderr_text.find("pollux: task ") == 0);
  CHECK(death.stderr_text.find("\"forgetful\"") != std::string::npos);
  CHECK(death.stderr_text.find("ForgetsWaker") != std::string::npos);
  CHECK(death.stderr_text.find("returned Pending but kept no waker") != std::string::npos);
  CHECK(death.stderr_text.find("returned Pending", death.stderr_text.find("returned Pending") + 1)
        == std::string::npos);
}

TEST_CASE("LostWake::Terminate stops the program at a task that keeps no waker") {
  Death death = run_in_child([] {
    LocalExecutor ex(Arc<IdleDriver>(), UnhandledException::Report, LostWake::Terminate);
    auto handle = ex.spawn(ForgetsWaker{}, "forgetful");
    ex.block_on(yield_now());
  });
  INFO(death.stderr_text);
  CHECK(death.aborted);
  CHECK(death.stderr_text.find("contract violation") != std::string::npos);
  CHECK(death.stderr_text.find("\"forgetful\"") != std::string::npos);
}

TEST_CASE("LostWake::Ignore says nothing of a task that keeps no waker") {
  Death death = run_in_child([] {
    RuntimeOptions options;
    options.lost_wake = LostWake::Ignore;
    auto rt = Runtime::multi_thread(1, options);
    auto handle = rt.spawn(ForgetsWaker{});
    rt.block_on(sleep(std::chrono::milliseconds(10)));
  });
  CHECK_FALSE(death.aborted);
  CHECK(death.stderr_text.empty());
}

// Waits only to be cancelled: Pending, no waker (tokio's JoinSet tests).
struct UntilCancelled {
  using Output = void;
  Poll<void> poll(Context&) { return pending; }
};

TEST_CASE("a JoinSet destroyed with tasks that wait only to be cancelled ends them without stopping the program") {
  Death death = run_in_child([] {
    for (bool mt : {false, true}) {
      auto rt = mt ? Runtime::multi_thread(2) : Runtime::current_thread();
      rt.block_on(poll_fn<int>([set = std::optional<JoinSet<void>>(), polls = 0](Context& cx) mutable -> Poll<int> {
        if (!set) {
          set.emplace();
          for (int i = 0; i < 10; ++i) set->spawn(UntilCancelled{});
        }
        if (++polls < 50) {  // the tasks run meanwhile, and wait with no waker
          cx.waker().wake_by_ref();
          return pending;
        }
        set.reset();  // aborts them
        return ready(0);
      }));
      // An abort reaches a multi-thread runtime's task through its worker:
      // wait for the workers, at most 10 s (a loaded machine under TSan
      // took over the 5 ms this once waited).
      for (int turns = 0; rt.live_tasks() != 0 && turns < 2000; ++turns)
        rt.block_on(sleep(std::chrono::milliseconds(5)));
      if (rt.live_tasks() != 0) std::abort();
    }
  });
  INFO(death.stderr_text);
  CHECK_FALSE(death.aborted);
}

namespace {
// Runs `fn` when destroyed.
template <class Fn>
struct OnDrop {
  explicit OnDrop(Fn f) : fn(std::move(f)) {}
  OnDrop(OnDrop&& other) noexcept : fn(std::move(other.fn)), armed(std::exchange(other.armed, false)) {}
  ~OnDrop() {
    if (armed) fn();
  }
  Fn fn;
  bool armed = true;
};
}  // namespace

TEST_CASE("tasks whose destructors wake each other at runtime shutdown end without a report or a crash") {
  // tokio's wake_while_rt_is_dropping: two tasks each wait on a oneshot
  // whose sender the other holds, and send on drop.
  Death death = run_in_child([] {
    for (bool mt : {false, true}) {
      auto rt = mt ? Runtime::multi_thread(2) : Runtime::current_thread();
      auto [tx1, rx1] = oneshot::channel<int>();
      auto [tx2, rx2] = oneshot::channel<int>();
      auto barrier = std::make_shared<Barrier>(3);
      rt.spawn(join(std::move(rx1), barrier->wait())
               | map([barrier, d = std::make_shared<OnDrop<std::function<void()>>>(
                                   [tx = std::make_shared<oneshot::Sender<int>>(std::move(tx2))] {
                                     (void)tx->send(1);
                                   })](auto&&) {}));
      rt.spawn(join(std::move(rx2), barrier->wait())
               | map([barrier, d = std::make_shared<OnDrop<std::function<void()>>>(
                                   [tx = std::make_shared<oneshot::Sender<int>>(std::move(tx1))] {
                                     (void)tx->send(2);
                                   })](auto&&) {}));
      rt.block_on(barrier->wait());
    }
  });
  INFO(death.stderr_text);
  CHECK_FALSE(death.aborted);
  CHECK(death.stderr_text.find("kept no waker") == std::string::npos);
}

TEST_CASE("block_on of a future that returns Pending and keeps no waker is reported with its type") {
  Death death = run_in_child([] { (void)block_on(ForgetsWaker{}); });
  INFO(death.stderr_text);
  CHECK(death.aborted);
  CHECK(death.stderr_text.find("ForgetsWaker returned Pending to block_on but kept no waker") != std::string::npos);
}

TEST_CASE("a runtime's block_on of a future that keeps no waker is reported too") {
  for (bool mt : {false, true}) {
    Death death = run_in_child([mt] {
      auto rt = mt ? Runtime::multi_thread(2) : Runtime::current_thread();
      (void)rt.block_on(ForgetsWaker{});
    });
    INFO(death.stderr_text);
    CHECK(death.aborted);
    CHECK(death.stderr_text.find("ForgetsWaker returned Pending to block_on but kept no waker") != std::string::npos);
  }
}

TEST_CASE("a detached task that keeps no waker is reported too") {
  Death death = run_in_child([] {
    ThreadPool pool(1);
    { auto detached = pool.spawn(ForgetsWaker{}); }
    // Once its first poll has begun, the pool's destructor joins the worker
    // only after that poll ended and the report was printed: no guess at
    // how long a loaded machine takes.
    auto polled = [&] {
      auto tasks = pool.tasks();
      return !tasks.empty() && tasks.front().polls >= 1;
    };
    for (int i = 0; i < 10000 && !polled(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!polled()) std::abort();
  });
  CHECK_FALSE(death.aborted);
  CHECK(death.stderr_text.find("kept no waker") != std::string::npos);
}

TEST_CASE("a future that keeps its waker, or is pending_future, is never reported") {
  Death death = run_in_child([] {
    LocalExecutor ex;
    auto forever = ex.spawn(pending_future<int>());
    auto [tx, rx] = oneshot::channel<int>();
    auto waiting = ex.spawn(std::move(rx));
    ex.block_on(yield_now());
    (void)tx.send(1);
    (void)ex.block_on(std::move(waiting));
    forever.abort();
  });
  INFO(death.stderr_text);
  CHECK_FALSE(death.aborted);
}

TEST_CASE("a Sleep moved after its first poll stops with its type in the message") {
  Death death = run_in_child([] {
    test::PausedDriver paused;
    Sleep first = sleep(std::chrono::seconds(1));
    (void)test::poll_once(first);
    Sleep moved = std::move(first);
  });
  INFO(death.stderr_text);
  CHECK(death.aborted);
  CHECK(death.stderr_text.find("pollux::Sleep moved after its first poll (contract rule 4)") != std::string::npos);
}

TEST_CASE("a Sleep moved before its first poll, or after it completed, is fine") {
  Death death = run_in_child([] {
    test::PausedDriver paused;
    Sleep first = sleep(std::chrono::seconds(1));
    Sleep moved = std::move(first);
    (void)test::poll_once(moved);
    paused.driver.advance(std::chrono::seconds(2));
    REQUIRE(test::poll_once(moved).is_ready());
    Sleep again = std::move(moved);
  });
  INFO(death.stderr_text);
  CHECK_FALSE(death.aborted);
}
#endif

TEST_CASE("a future polled the right number of times does not stop") {
  Death death = run_in_child([] { (void)block_on(map(ready_future(1), [](int x) { return x + 1; })); });
  CHECK_FALSE(death.aborted);
  CHECK(death.stderr_text.empty());
}

// A primitive destroyed while a future still waits on it: what happens when
// a Notify, Semaphore, Mutex, RwLock or Barrier is declared after the
// runtime whose tasks wait on it, so it goes first.
template <class Make, class Wait>
Death destroyed_while_waited(Make make, Wait wait) {
  return run_in_child([make, wait] {
    test::Probe probe;
    auto primitive = make();
    auto waiting = wait(*primitive);
    if (waiting.poll(probe.cx).is_ready()) return;
    primitive.reset();  // the waiting future still points at it
  });
}

TEST_CASE(
    "a Notify, Semaphore, Mutex, RwLock or Barrier destroyed while a task waits on it stops a debug build, named") {
  if constexpr (!pollux::detail::check_contract) return;
  struct Case {
    Death death;
    const char* name;
  };
  Case cases[] = {
      {destroyed_while_waited([] { return std::make_unique<Notify>(); }, [](Notify& n) { return n.notified(); }),
       "pollux::Notify"},
      {destroyed_while_waited([] { return std::make_unique<Semaphore>(0); }, [](Semaphore& s) { return s.acquire(); }),
       "pollux::Semaphore"},
      {run_in_child([] {
         test::Probe probe;
         auto mutex = std::make_unique<pollux::Mutex<int>>(0);
         auto held = mutex->try_lock();
         auto waiting = mutex->lock();
         if (!held || waiting.poll(probe.cx).is_ready()) return;
         mutex.reset();
       }),
       "pollux::Mutex<int>"},
      {run_in_child([] {
         test::Probe probe;
         auto lock = std::make_unique<RwLock<int>>(0);
         auto held = lock->try_write();
         auto waiting = lock->read();
         if (!held || waiting.poll(probe.cx).is_ready()) return;
         lock.reset();
       }),
       "pollux::RwLock<int>"},
      {destroyed_while_waited([] { return std::make_unique<Barrier>(2); }, [](Barrier& b) { return b.wait(); }),
       "pollux::Barrier"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(c.death.aborted);
    CHECK(c.death.stderr_text.find(std::string(c.name) + " destroyed while a task still waits on it")
          != std::string::npos);
  }
}
