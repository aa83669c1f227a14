#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "support.hpp"

using namespace pollux;

TEST_CASE("a thread pool of zero threads is refused") {
  CHECK_THROWS_WITH_AS(ThreadPool(0), "pollux::ThreadPool: needs at least one thread, got 0", std::invalid_argument);
}

TEST_CASE("tasks spawned on a thread pool run and their handles give the outputs") {
  ThreadPool pool(2);
  std::vector<JoinHandle<int>> handles;
  for (int i = 0; i < 100; ++i) handles.push_back(pool.spawn(lazy([i] { return i * 2; })));
  auto values = pool.block_on(join_all(std::move(handles)));
  for (int i = 0; i < 100; ++i) CHECK(values[i] == i * 2);
}

TEST_CASE("tasks spread over the workers") {
  ThreadPool pool(4);
  std::mutex mutex;
  std::set<std::thread::id> seen;
  std::vector<JoinHandle<void>> handles;
  for (int i = 0; i < 64; ++i) {
    handles.push_back(pool.spawn(lazy([&] {
      // Long enough that one worker cannot take them all before the others wake.
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
      while (std::chrono::steady_clock::now() < until) {
      }
      std::lock_guard lock(mutex);
      seen.insert(std::this_thread::get_id());
    })));
  }
  pool.block_on(join_all(std::move(handles)));
  CHECK(seen.size() > 1);
}

TEST_CASE("pollux::spawn inside a pool task and inside block_on reaches the pool") {
  ThreadPool pool(2);
  auto v = pool.block_on(then(lazy([] { return pollux::spawn(lazy([] { return pollux::spawn(ready_future(6)); })); }),
                              [](JoinHandle<JoinHandle<int>> outer) {
                                return then(std::move(outer), [](Result<JoinHandle<int>, Cancelled> inner) {
                                  return std::move(inner).value();
                                });
                              }));
  CHECK(v == 6);
}

TEST_CASE("spawn works from any thread") {
  ThreadPool pool(2);
  std::vector<std::thread> threads;
  std::mutex mutex;
  std::vector<JoinHandle<int>> handles;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        auto h = pool.spawn(ready_future(t));
        std::lock_guard lock(mutex);
        handles.push_back(std::move(h));
      }
    });
  }
  for (auto& th : threads) th.join();
  auto values = pool.block_on(join_all(std::move(handles)));
  int sum = 0;
  for (auto& v : values) sum += v.value();
  CHECK(sum == 100 * (0 + 1 + 2 + 3));
}

TEST_CASE("destroying a pool cancels its pending tasks and destroys their futures") {
  std::atomic<int> drops{0};
  std::optional<JoinHandle<int>> handle;
  {
    ThreadPool pool(2);
    handle = pool.spawn(test::PendingWithAtomicDrop(&drops));
    for (int i = 0; i < 10; ++i) pool.spawn(test::PendingWithAtomicDrop(&drops));
    pool.block_on(yield_now());
  }
  CHECK(drops == 11);
  CHECK(test::is_cancelled(test::poll_once(*handle)));
}

TEST_CASE("an idle pool parks its workers, and a wake from outside reaches a task") {
  ThreadPool pool(2);
  auto [tx, rx] = oneshot::channel<int>();
  auto handle = pool.spawn(std::move(rx));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // every worker parks
  (void)tx.send(9);
  CHECK(pool.block_on(std::move(handle)) == std::optional<int>(9));
}

TEST_CASE("abort racing completion on a pool gives the output or Cancelled") {
  ThreadPool pool(2);
  for (int round = 0; round < 500; ++round) {
    auto [tx, rx] = oneshot::channel<int>();
    auto handle = pool.spawn(std::move(rx));
    std::thread sender([tx = std::move(tx), round]() mutable { (void)tx.send(round); });
    handle.abort();
    sender.join();
    auto output = pool.block_on(std::move(handle));
    if (output.has_value()) CHECK(output.value() == std::optional<int>(round));
  }
}

TEST_CASE("a pool's dump lists its live tasks") {
  ThreadPool pool(2);
  auto h = pool.spawn(pending_future<int>(), "pool-waiter");
  while (pool.tasks().empty() || pool.tasks()[0].polls == 0) std::this_thread::yield();
  std::string text = pool.dump();
  CHECK(text.find("1 live task") != std::string::npos);
  CHECK(text.find("pool-waiter") != std::string::npos);
}

TEST_CASE("block_on on one of the pool's own workers is refused") {
  ThreadPool pool(2);
  auto message = pool.block_on(pool.spawn(lazy([&pool] {
                       try {
                         pool.block_on(ready_future());
                       } catch (const std::logic_error& e) {
                         return std::string(e.what());
                       }
                       return std::string();
                     })))
                     .value();
  CHECK(message.find("one of the pool's own workers") != std::string::npos);
}

TEST_CASE("an idle pool uses no CPU: its workers park instead of spinning") {
  auto cpu_now = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
  };
  ThreadPool pool(4);
  auto handle = pool.spawn(pending_future<int>());  // a task that waits forever
  pool.block_on(yield_now());
  auto cpu_before = cpu_now();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the pool sits idle
  auto cpu_used = cpu_now() - cpu_before;
  // Four spinning workers would burn about 400 ms of CPU in 200 ms (two
  // cores: at least 200 ms); parked ones burn none.
  CHECK(cpu_used < std::chrono::milliseconds(20));
}

namespace {

// An IdleDriver that gives each worker a thread park of its own, and records on
// which thread each was made and ended (as the driver does with rings).
class ThreadParks final : public IdleDriver {
 public:
  class Own final : public IdleDriver {
   public:
    explicit Own(ThreadParks& parent) : parent_(parent), made_on_(std::this_thread::get_id()) {}
    void park() override {
      parks_.fetch_add(1);
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return token_; });
      token_ = false;
    }
    void poll() override { polls_.fetch_add(1); }
    void unpark() noexcept override {
      {
        std::lock_guard lock(mutex_);
        token_ = true;
      }
      cv_.notify_one();
    }
    void end_thread() noexcept override {
      ended_on_ = std::this_thread::get_id();
      parent_.ended_.fetch_add(1);
    }
    std::atomic<int> parks_{0}, polls_{0};
    ThreadParks& parent_;
    std::thread::id made_on_, ended_on_;

   private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool token_ = false;
  };

  // The pool's own driver park: a futex-like wait, as the thread parks'.
  void park() override { own_for_driver_.park(); }
  void poll() override {}
  void unpark() noexcept override { own_for_driver_.unpark(); }
  Arc<IdleDriver> make_thread_park() override {
    auto own = make_arc<Own>(*this);
    std::lock_guard lock(mutex_);
    made_.push_back(own);
    return own;
  }

  std::vector<Arc<Own>> made() {
    std::lock_guard lock(mutex_);
    return made_;
  }
  std::atomic<int> ended_{0};

 private:
  Own own_for_driver_{*this};
  std::mutex mutex_;
  std::vector<Arc<Own>> made_;
};

}  // namespace

TEST_CASE("each worker sleeps in a thread park its driver makes it on its thread, and ends it there") {
  auto parks = make_arc<ThreadParks>();
  {
    ThreadPoolOptions options;
    options.driver = parks;
    ThreadPool pool(3, std::move(options));
    // Made on each worker's thread before the pool's constructor returns.
    auto made = parks->made();
    REQUIRE(made.size() == 3);
    std::set<std::thread::id> threads;
    for (auto& own : made) threads.insert(own->made_on_);
    CHECK(threads.size() == 3);
    CHECK(threads.count(std::this_thread::get_id()) == 0);
    // Work from outside wakes workers asleep in their thread parks, again and again.
    for (int round = 0; round < 50; ++round) {
      std::vector<JoinHandle<int>> handles;
      for (int i = 0; i < 4; ++i) handles.push_back(pool.spawn(lazy([i] { return i; })));
      auto values = pool.block_on(join_all(std::move(handles)));
      CHECK(values[3] == 3);
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // let the workers fall asleep
    }
    int parked = 0;
    for (auto& own : made) parked += own->parks_.load();
    CHECK(parked > 0);
    CHECK(parks->ended_.load() == 0);
  }
  CHECK(parks->ended_.load() == 3);
  for (auto& own : parks->made()) CHECK(own->ended_on_ == own->made_on_);
}

TEST_CASE("tasks() lists a pool's tasks in slices while they end on the workers, never reading one that is gone") {
  ThreadPool pool(2);
  constexpr std::size_t kTasks = 20'000;
  std::vector<oneshot::Sender<int>> ends;
  for (std::size_t i = 0; i < kTasks; ++i) {
    auto [tx, rx] = oneshot::channel<int>();
    ends.push_back(std::move(tx));
    (void)pool.spawn(std::move(rx) | map([](auto) {}), "ends soon");
  }
  // Listed whole before any ends. (A check that a listing ran while they
  // ended could fail on a loaded machine, where the ender may finish
  // before this thread looks.)
  CHECK(pool.tasks().size() == kTasks);
  std::thread ender([&ends] {
    for (auto& end : ends) (void)end.send(1);  // each send ends a task on a worker
  });
  for (int listings = 0; pool.live_tasks() != 0 && listings < 1000; ++listings) {
    for (const TaskInfo& task : pool.tasks()) CHECK(task.name == "ends soon");
  }
  ender.join();
}
