// The runtime's metrics: each count is exact where the events are known
// (polls, spawns, steals, overflows, queue depths, timers, jobs), the
// histograms hold one entry per poll, and a snapshot may be taken from any
// thread while the workers run. A build with -Dmetrics=false reports
// `counted = false` and zeros; these tests then check only that.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <latch>
#include <thread>
#include <vector>

#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

// Pending `n` times, waking itself each time, then Ready: n + 1 polls.
struct YieldTimes {
  using Output = void;
  int left;
  Poll<void> poll(Context& cx) {
    if (left-- > 0) {
      cx.waker().wake_by_ref();
      return pending;
    }
    return ready();
  }
};

// The metrics once the workers have published `polls` polls: a busy
// worker publishes every 61 tasks and when it parks, which an idle pool's
// workers do at once. Gives up after 10 s (and the caller's check fails).
ExecutorMetrics once_polled(const Runtime& rt, std::uint64_t polls) {
  auto give_up = std::chrono::steady_clock::now() + 10s;
  ExecutorMetrics m = rt.metrics().executor;
  while (m.counted && m.total_polls() < polls && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
    m = rt.metrics().executor;
  }
  return m;
}

// Spins (yielding the CPU) until `flag` is set: holds a worker inside a
// poll, so that what happens meanwhile is another thread's doing.
void wait_for(const std::atomic<bool>& flag) {
  while (!flag.load(std::memory_order_acquire)) std::this_thread::yield();
}

}  // namespace

TEST_CASE("a multi-thread runtime's workers count every poll of every task exactly once") {
  Runtime rt = Runtime::multi_thread(2);
  std::vector<JoinHandle<void>> handles;
  for (int i = 0; i < 100; ++i) handles.push_back(rt.spawn(YieldTimes{10}));
  rt.block_on(join_all(std::move(handles)));
  ExecutorMetrics m = once_polled(rt, 100 * 11);
  REQUIRE(m.workers == 2);
  REQUIRE(m.worker.size() == 2);
  if (!m.counted) return;
  CHECK(m.total_polls() == 100 * 11);
  CHECK(m.spawned_tasks == 100);
  CHECK(m.finished_tasks == 100);
  CHECK(m.live_tasks == 0);
}

TEST_CASE("a current-thread runtime counts its polls, spawns and finished tasks") {
  Runtime rt = Runtime::current_thread();
  std::vector<JoinHandle<void>> handles;
  for (int i = 0; i < 10; ++i) handles.push_back(rt.spawn(YieldTimes{4}));
  rt.block_on(join_all(std::move(handles)));
  ExecutorMetrics m = rt.metrics().executor;
  REQUIRE(m.workers == 1);
  CHECK(m.live_tasks == 0);
  if (!m.counted) return;
  CHECK(m.total_polls() == 10 * 5);
  CHECK(m.spawned_tasks == 10);
  CHECK(m.finished_tasks == 10);
}

TEST_CASE("live tasks count what was spawned and has not ended, from another thread too") {
  Runtime rt = Runtime::current_thread();
  std::vector<JoinHandle<void>> handles;
  for (int i = 0; i < 3; ++i) handles.push_back(rt.spawn(pending_future()));
  std::size_t seen = 0;
  std::thread([&] { seen = rt.metrics().executor.live_tasks; }).join();
  CHECK(seen == 3);
  for (auto& h : handles) h.abort();
  rt.block_on(join_all(std::move(handles)));
  CHECK(rt.metrics().executor.live_tasks == 0);
}

TEST_CASE("a worker that steals counts the tasks it took and the steal") {
  // Declared before the pool, which outlives them otherwise: the fourth
  // task, which nothing waits for, may run while the pool shuts down.
  std::atomic<bool> release{false};
  std::atomic<int> ran{0};
  ThreadPool pool(2);
  // The first task queues four on its own worker and then holds that
  // worker: the three in its queue can run only where the other steals them.
  auto holder = pool.spawn(lazy([&] {
    for (int i = 0; i < 4; ++i) auto detached = pollux::spawn(lazy([&] { ran.fetch_add(1); }));
    while (ran.load() < 3) std::this_thread::yield();
    release.store(true);
  }));
  CHECK(pool.block_on(std::move(holder)).has_value());
  ExecutorMetrics m = pool.metrics();
  if (!m.counted) return;
  std::uint64_t steals = m.worker[0].steals + m.worker[1].steals;
  std::uint64_t operations = m.worker[0].steal_operations + m.worker[1].steal_operations;
  CHECK(steals >= 3);
  CHECK(operations >= 1);
  CHECK(operations <= steals);
}

TEST_CASE("a full local queue's overflow to the inject queue is counted") {
  ThreadPool pool(1);
  std::atomic<int> ran{0};
  constexpr int kTasks = 2000;  // several times a worker's queue
  CHECK(pool.block_on(pool.spawn(lazy([&] {
              for (int i = 0; i < kTasks; ++i) auto detached = pollux::spawn(lazy([&] { ran.fetch_add(1); }));
            })))
            .has_value());
  while (ran.load() < kTasks) std::this_thread::yield();
  ExecutorMetrics m = pool.metrics();
  if (!m.counted) return;
  CHECK(m.worker[0].overflows >= 1);
}

TEST_CASE("the queue depths show the tasks that wait while the worker is held") {
  ThreadPool pool(1);
  std::atomic<bool> held{false};
  std::atomic<bool> release{false};
  auto holder = pool.spawn(lazy([&] {
    for (int i = 0; i < 10; ++i) auto detached = pollux::spawn(ready_future(i));  // one to the LIFO slot, nine queued
    held.store(true);
    wait_for(release);
  }));
  wait_for(held);
  std::vector<JoinHandle<int>> outside;
  for (int i = 0; i < 5; ++i) outside.push_back(pool.spawn(ready_future(i)));
  ExecutorMetrics m = pool.metrics();
  release.store(true);
  CHECK(pool.block_on(std::move(holder)).has_value());
  pool.block_on(join_all(std::move(outside)));
  if (!m.counted) return;
  CHECK(m.worker[0].local_queue_depth == 9);
  CHECK(m.inject_queue_depth == 5);
  CHECK(m.live_tasks == 1 + 10 + 5);
}

TEST_CASE("an idle worker counts its parks, and its busy time stays within its up time") {
  ThreadPool pool(2);
  CHECK(pool.block_on(pool.spawn(ready_future(1))).has_value());
  // Both workers run out of work and sleep, however late a loaded machine
  // lets them get there (at most 10 s: then the check below fails).
  auto parked = [&] {
    ExecutorMetrics m = pool.metrics();
    return std::all_of(m.worker.begin(), m.worker.end(), [](const WorkerMetrics& w) { return w.parks >= 1; });
  };
  auto give_up = std::chrono::steady_clock::now() + 10s;
  while (pool.metrics().counted && !parked() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  ExecutorMetrics m = pool.metrics();
  for (const WorkerMetrics& w : m.worker) {
    CHECK(w.busy <= m.uptime);
    if (m.counted) CHECK(w.parks >= 1);
    CHECK(w.unparks <= w.parks);
  }
}

TEST_CASE("a worker counts the time it spends in a poll as busy") {
  ThreadPool pool(1);
  CHECK(pool.block_on(pool.spawn(lazy([] {
              auto until = std::chrono::steady_clock::now() + 50ms;
              while (std::chrono::steady_clock::now() < until) {
              }
            })))
            .has_value());
  ExecutorMetrics m = pool.metrics();
  if (!m.counted) return;
  CHECK(m.worker[0].busy >= 50ms);
}

TEST_CASE("with histograms on, every poll has one duration and one schedule latency") {
  RuntimeOptions options;
  options.histograms = true;
  Runtime rt = Runtime::multi_thread(2, options);
  std::vector<JoinHandle<void>> handles;
  for (int i = 0; i < 20; ++i) handles.push_back(rt.spawn(YieldTimes{2}));
  // One poll that takes at least 3 ms (more on a loaded machine).
  handles.push_back(rt.spawn(lazy([] { std::this_thread::sleep_for(3ms); })));
  rt.block_on(join_all(std::move(handles)));
  ExecutorMetrics m = once_polled(rt, 20 * 3 + 1);
  CHECK(m.histograms);
  if (!m.counted) return;
  CHECK(m.poll_duration.total() == m.total_polls());
  CHECK(m.schedule_latency.total() == m.total_polls());
  CHECK(m.poll_duration.total() == 20 * 3 + 1);
  CHECK(m.poll_duration.quantile(1.0) >= 3ms);
  std::uint64_t long_polls = 0;
  for (std::size_t i = DurationHistogram::bucket_of(3ms); i < DurationHistogram::kBuckets; ++i) {
    long_polls += m.poll_duration.counts[i];
  }
  CHECK(long_polls >= 1);
  CHECK(m.poll_duration.sum >= 3ms);
  // Each wait is measured from the task's own wake: a wait from any other
  // time (a missing stamp reads as the clock's whole age) would land here.
  CHECK(m.schedule_latency.quantile(0.5) < 1s);
}

TEST_CASE("with histograms on, a current-thread runtime fills them too") {
  RuntimeOptions options;
  options.histograms = true;
  Runtime rt = Runtime::current_thread(options);
  CHECK(rt.block_on(rt.spawn(YieldTimes{5})).has_value());
  ExecutorMetrics m = rt.metrics().executor;
  CHECK(m.histograms);
  if (!m.counted) return;
  CHECK(m.poll_duration.total() == 6);
  CHECK(m.schedule_latency.total() == 6);
}

TEST_CASE("without the histograms option the histograms stay empty") {
  Runtime rt = Runtime::multi_thread(1);
  CHECK(rt.block_on(rt.spawn(YieldTimes{5})).has_value());
  ExecutorMetrics m = rt.metrics().executor;
  CHECK_FALSE(m.histograms);
  CHECK(m.poll_duration.total() == 0);
  CHECK(m.schedule_latency.total() == 0);
}

TEST_CASE("the driver counts the timers it fired") {
  Runtime rt = Runtime::current_thread();
  std::vector<JoinHandle<void>> handles;
  for (int i = 0; i < 10; ++i) handles.push_back(rt.spawn(sleep(1ms)));
  rt.block_on(join_all(std::move(handles)));
  DriverMetrics m = rt.metrics().driver;
  if (!m.counted) return;
  CHECK(m.timers_fired == 10);
}

TEST_CASE("the driver counts the socket events or io_uring completions of its connections") {
  for (IoBackend backend : {IoBackend::Epoll, IoBackend::Uring}) {
    for (bool multi : {false, true}) {
      CAPTURE(multi);
      RuntimeOptions options;
      options.io_backend = backend;
      Runtime rt = multi ? Runtime::multi_thread(2, options) : Runtime::current_thread(options);
      CAPTURE(rt.io_backend());
      TcpListener listener = rt.block_on(lazy([] { return TcpListener::bind("127.0.0.1:0"); }));
      // In tasks: on a multi-thread runtime, their sockets are the workers'.
      auto server = rt.spawn(test::AcceptAndEcho(listener, 1));
      auto client = rt.spawn(test::PingClient(listener.local_addr(), 1, 10));
      CHECK(rt.block_on(std::move(client)).value() == 10);
      CHECK(rt.block_on(std::move(server)).has_value());
      DriverMetrics m = rt.metrics().driver;
      if (!m.counted) return;
      CHECK(m.socket_events + m.uring_completions >= 10);
    }
  }
}

TEST_CASE("the blocking pool's metrics show its threads, its queue and its jobs") {
  BlockingPool pool(BlockingPoolOptions{1, 10s});
  std::latch started(1);
  std::atomic<bool> release{false};
  auto first = spawn_blocking_on(pool, [&] {
    started.count_down();
    wait_for(release);
  });
  auto second = spawn_blocking_on(pool, [] {});
  started.wait();
  BlockingPoolMetrics m = pool.metrics();
  release.store(true);
  CHECK(m.threads == 1);
  CHECK(m.idle_threads == 0);
  CHECK(m.queue_depth == 1);  // the second waits for the only thread
  CHECK(m.jobs_submitted == 2);
  Runtime rt = Runtime::current_thread();
  rt.block_on(join(std::move(first), std::move(second)));
}

TEST_CASE("a runtime's metrics include its blocking pool") {
  Runtime rt = Runtime::current_thread();
  rt.block_on(lazy([] { return spawn_blocking([] { return 1; }); }));
  BlockingPoolMetrics m = rt.metrics().blocking;
  CHECK(m.jobs_submitted == 1);
  CHECK(m.threads <= 1);
}

TEST_CASE("metrics taken from another thread while the workers run do not race with them") {
  Runtime rt = Runtime::multi_thread(2);
  std::atomic<bool> done{false};
  std::uint64_t last_polls = 0;
  std::thread reader([&] {
    while (!done.load()) {
      RuntimeMetrics m = rt.metrics();
      CHECK(m.executor.total_polls() >= last_polls);  // counts never go back
      last_polls = m.executor.total_polls();
    }
  });
  std::vector<JoinHandle<void>> handles;
  for (int i = 0; i < 200; ++i) handles.push_back(rt.spawn(YieldTimes{20}));
  rt.block_on(join_all(std::move(handles)));
  done.store(true);
  reader.join();
}

TEST_CASE("a duration falls in the bucket whose range holds it") {
  CHECK(DurationHistogram::bucket_of(0ns) == 0);
  CHECK(DurationHistogram::bucket_of(999ns) == 0);
  CHECK(DurationHistogram::bucket_of(1us) == 1);
  CHECK(DurationHistogram::bucket_of(1999ns) == 1);
  CHECK(DurationHistogram::bucket_of(2us) == 2);
  CHECK(DurationHistogram::bucket_of(-5ns) == 0);
  CHECK(DurationHistogram::bucket_of(1h) == DurationHistogram::kBuckets - 1);
  for (std::size_t i = 0; i + 1 < DurationHistogram::kBuckets; ++i) {
    CAPTURE(i);
    CHECK(DurationHistogram::bucket_of(DurationHistogram::lower_bound(i)) == i);
    CHECK(DurationHistogram::bucket_of(DurationHistogram::upper_bound(i) - 1ns) == i);
    CHECK(DurationHistogram::upper_bound(i) == DurationHistogram::lower_bound(i + 1));
  }
}

TEST_CASE("a histogram's quantile is the end of the bucket that holds it") {
  DurationHistogram h;
  CHECK(h.quantile(0.5) == 0ns);
  h.counts[DurationHistogram::bucket_of(3us)] = 90;   // [2, 4) µs
  h.counts[DurationHistogram::bucket_of(50us)] = 10;  // [32, 64) µs
  CHECK(h.total() == 100);
  CHECK(h.quantile(0.5) == 4us);
  CHECK(h.quantile(0.9) == 4us);
  CHECK(h.quantile(0.91) == 64us);
  CHECK(h.quantile(1.0) == 64us);
  h.sum = 770us;
  DurationHistogram twice = h;
  twice += h;
  CHECK(twice.total() == 200);
  CHECK(twice.sum == 1540us);
}
