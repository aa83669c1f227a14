// spawn_blocking and its pool: results and exceptions come back, blocking
// functions run beside the tasks, the pool grows, is bounded, shrinks, and
// cancels what it never ran.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <latch>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

// A job for a bare BlockingPool: runs fn, counts how it ended.
struct CountingJob : detail::BlockingJob {
  std::function<void()> fn;
  std::atomic<int>* ran;
  std::atomic<int>* cancelled;
  CountingJob(std::function<void()> f, std::atomic<int>& r, std::atomic<int>& c)
      : fn(std::move(f)), ran(&r), cancelled(&c) {}
  void run() noexcept override {
    fn();
    ++*ran;
  }
  void cancel() noexcept override { ++*cancelled; }
};

// Waits (up to 10 s) for `condition`, which a pool thread's exit makes true.
template <class Fn>
bool eventually(Fn condition) {
  auto give_up = std::chrono::steady_clock::now() + 10s;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

}  // namespace

TEST_CASE("spawn_blocking gives the function's result to the task that awaits it") {
  for (int workers : {0, 2}) {
    Runtime runtime = workers == 0 ? Runtime::current_thread() : Runtime::multi_thread(2);
    // Spawned from inside a task, which finds the runtime's pool by itself.
    auto task = runtime.spawn(then(yield_now(), [] { return spawn_blocking([] { return 42; }); }));
    CHECK(runtime.block_on(std::move(task)).value() == 42);
  }
}

TEST_CASE("spawn_blocking runs the function on another thread than the task's") {
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  std::thread::id ran_on = rt.block_on(spawn_blocking([] { return std::this_thread::get_id(); })).value();
  CHECK(ran_on != std::this_thread::get_id());
}

TEST_CASE("an exception thrown by the blocking function is rethrown by its future") {
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  auto failing = spawn_blocking([]() -> int { throw std::runtime_error("disk on fire"); });
  CHECK_THROWS_WITH_AS((void)rt.block_on(std::move(failing)), "disk on fire", std::runtime_error);
}

TEST_CASE("a task keeps running while a blocking function blocks") {
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  std::latch release(1);
  auto blocked = spawn_blocking([&] { release.wait(); });
  // The task side: it runs to completion while the blocking thread waits.
  int ran = rt.block_on(lazy([&] {
    release.count_down();
    return 7;
  }));
  CHECK(ran == 7);
  CHECK(rt.block_on(std::move(blocked)).has_value());
}

TEST_CASE("spawn_blocking outside a runtime throws NoRuntime") {
  CHECK_THROWS_AS((void)spawn_blocking([] { return 1; }), NoRuntime);
}

TEST_CASE("the pool starts a thread per concurrent job, up to its bound") {
  BlockingPool pool(BlockingPoolOptions{4, 10s});
  std::atomic<int> ran{0}, cancelled{0}, running{0}, most{0};
  std::latch all_started(4);
  std::latch release(1);
  for (int i = 0; i < 8; ++i) {
    pool.submit(make_arc<CountingJob>(
        [&] {
          int now = ++running;
          int seen = most.load();
          while (now > seen && !most.compare_exchange_weak(seen, now)) {
          }
          if (now <= 4) all_started.count_down();
          release.wait();
          --running;
        },
        ran, cancelled));
  }
  all_started.wait();  // four run at once: the pool grew to its bound
  CHECK(pool.threads() == 4);
  release.count_down();
  CHECK(eventually([&] { return ran.load() == 8; }));
  CHECK(most.load() == 4);  // never more than the bound
  CHECK(cancelled.load() == 0);
}

TEST_CASE("idle pool threads exit after keep_alive") {
  BlockingPool pool(BlockingPoolOptions{8, 20ms});
  std::atomic<int> ran{0}, cancelled{0};
  for (int i = 0; i < 3; ++i) pool.submit(make_arc<CountingJob>([] {}, ran, cancelled));
  CHECK(eventually([&] { return ran.load() == 3; }));
  CHECK(eventually([&] { return pool.threads() == 0; }));
  pool.submit(make_arc<CountingJob>([] {}, ran, cancelled));  // and a new job starts one again
  CHECK(eventually([&] { return ran.load() == 4; }));
}

TEST_CASE("destroying the pool waits for running jobs and cancels queued ones") {
  std::atomic<int> ran{0}, cancelled{0};
  std::latch started(1);
  std::latch release(1);
  std::thread destroyer;
  {
    auto pool = std::make_unique<BlockingPool>(BlockingPoolOptions{1, 10s});
    pool->submit(make_arc<CountingJob>(
        [&] {
          started.count_down();
          release.wait();
        },
        ran, cancelled));
    pool->submit(make_arc<CountingJob>([] {}, ran, cancelled));  // queued behind the first
    started.wait();
    destroyer = std::thread([&pool] { pool.reset(); });
    CHECK(eventually([&] { return cancelled.load() == 1; }));  // the queued one, at once
    CHECK(ran.load() == 0);
    release.count_down();  // the running one finishes, then the destructor returns
    destroyer.join();
  }
  CHECK(ran.load() == 1);
  CHECK(cancelled.load() == 1);
}

TEST_CASE("a spawn_blocking future whose job the pool never ran gives Cancelled") {
  std::latch started(1);
  std::latch release(1);
  auto pool = std::make_unique<BlockingPool>(BlockingPoolOptions{1, 10s});
  auto running = spawn_blocking_on(*pool, [&] {
    started.count_down();
    release.wait();
  });
  auto queued = spawn_blocking_on(*pool, [] { return 1; });  // behind the first: the bound is 1
  started.wait();                                            // else the destructor could cancel both
  std::thread destroyer([&pool] { pool.reset(); });
  CHECK_FALSE(block_on(std::move(queued)).has_value());
  release.count_down();
  destroyer.join();
  CHECK(block_on(std::move(running)).has_value());  // it ran to the end
}

TEST_CASE("the pool's condition variable loses no notify that comes between a waiter's check and its sleep") {
  // Two threads hand a token back and forth 20,000 times through one
  // FutexCondVar; a notify lost in the window between a waiter's check
  // and its futex sleep would leave both asleep, and the test would hang.
  detail::Mutex mutex;
  detail::CondVar cond;
  int turn = 0;  // guarded by mutex
  constexpr int kRounds = 20000;
  std::thread other([&] {
    for (int i = 0; i < kRounds; ++i) {
      detail::UniqueLock lock(mutex);
      cond.wait(lock, [&] { return turn == 1; });
      turn = 0;
      lock.unlock();
      cond.notify_one();
    }
  });
  for (int i = 0; i < kRounds; ++i) {
    detail::UniqueLock lock(mutex);
    cond.wait(lock, [&] { return turn == 0; });
    turn = 1;
    lock.unlock();
    cond.notify_one();
  }
  other.join();
  CHECK(turn == 0);  // the other thread took the last turn
}

TEST_CASE("the pool's condition variable times out when nobody notifies") {
  detail::Mutex mutex;
  detail::CondVar cond;
  detail::UniqueLock lock(mutex);
  auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(cond.wait_for(lock, 20ms, [] { return false; }));
  CHECK(std::chrono::steady_clock::now() - start >= 20ms);
}
