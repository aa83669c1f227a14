// Runtime: an executor plus a driver, current-thread and multi-thread.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "death.hpp"
#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

// Yields until `stop` is set: a task that never lets its thread go idle.
auto spin_until(std::atomic<bool>& stop) {
  return poll_fn<int>([&stop, yields = 0](Context& cx) mutable -> Poll<int> {
    if (stop.load()) return ready(yields);
    ++yields;
    cx.waker().wake_by_ref();
    return pending;
  });
}

}  // namespace

TEST_CASE("a current-thread runtime drives sleeps in block_on and in spawned tasks") {
  auto rt = Runtime::current_thread();
  rt.driver().pause();
  auto guard = rt.enter();  // sleep(1s) reads the paused clock
  Instant start = now();
  auto a = rt.spawn(map(sleep(1s), [] { return 1; }));
  auto b = rt.spawn(map(sleep(1s), [] { return 2; }));
  auto [x, y] = rt.block_on(join(std::move(a), std::move(b)));
  CHECK(x.value() + y.value() == 3);
  CHECK(rt.driver().now() - start == 1s);  // two 1 s timers at once take 1 s
}

TEST_CASE("pollux::spawn inside a runtime's task reaches the runtime, timers included") {
  for (int kind = 0; kind < 2; ++kind) {
    auto rt = kind == 0 ? Runtime::current_thread() : Runtime::multi_thread(2);
    int total = rt.block_on(then(lazy([] { return 0; }), [](int) {
      std::vector<JoinHandle<int>> handles;
      for (int i = 0; i < 10; ++i)
        handles.push_back(spawn(map(sleep(std::chrono::milliseconds(i)), [i] { return i; })));
      return map(join_all(std::move(handles)), [](std::vector<Result<int, Cancelled>> values) {
        int sum = 0;
        for (auto& v : values) sum += v.value();
        return sum;
      });
    }));
    CHECK(total == 45);
  }
}

TEST_CASE("a busy task cannot starve a timer on a current-thread runtime") {
  auto rt = Runtime::current_thread();
  std::atomic<bool> stop{false};
  auto spinner = rt.spawn(spin_until(stop));
  rt.block_on(map(sleep(20ms), [&] { stop = true; }));
  CHECK(rt.block_on(std::move(spinner)).value() > 0);
}

TEST_CASE("a busy task cannot starve a timer on a multi-thread runtime") {
  auto rt = Runtime::multi_thread(1);
  std::atomic<bool> stop{false};
  auto spinner = rt.spawn(spin_until(stop));
  auto timer = rt.spawn(map(sleep(20ms), [&] { stop = true; }));
  rt.block_on(std::move(timer)).value();
  CHECK(rt.block_on(std::move(spinner)).value() > 0);
}

TEST_CASE("a timeout armed while its executor stays busy still ends on time") {
  // timeout(d, f) reads no clock when it arms: the busy executor's next
  // look at the driver settles its deadline, within 61 tasks.
  auto rt = Runtime::current_thread();
  std::atomic<bool> stop{false};
  auto spinner = rt.spawn(spin_until(stop));
  std::chrono::nanoseconds least = std::chrono::hours(1);
  for (int i = 0; i < 3; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    CHECK_FALSE(rt.block_on(timeout(20ms, pending_future<int>())).has_value());
    auto took = std::chrono::steady_clock::now() - t0;
    CHECK(took >= 20ms);
    least = std::min<std::chrono::nanoseconds>(least, took);
  }
  CHECK(least < 30ms);
  stop = true;
  CHECK(rt.block_on(std::move(spinner)).value() > 0);
}

TEST_CASE("a timeout armed while another thread sleeps in the driver ends on time") {
  auto rt = Runtime::multi_thread(2);
  auto far = rt.spawn(sleep(1h));  // a worker now sleeps in the driver for an hour
  auto t0 = std::chrono::steady_clock::now();
  CHECK_FALSE(rt.block_on(timeout(20ms, pending_future<int>())).has_value());
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);
  far.abort();
}

TEST_CASE("timers armed on one worker wake tasks on any worker") {
  auto rt = Runtime::multi_thread(4);
  std::mt19937 rng(3);
  std::vector<JoinHandle<int>> handles;
  for (int i = 0; i < 2000; ++i) {
    auto delay = std::chrono::microseconds(rng() % 30'000);
    handles.push_back(rt.spawn(then(sleep(delay), [delay] {
      Instant deadline = now();
      return map(sleep(delay / 2), [deadline] { return now() >= deadline ? 1 : 0; });
    })));
  }
  auto done = rt.block_on(join_all(std::move(handles)));
  int sum = 0;
  for (auto& v : done) sum += v.value();
  CHECK(sum == 2000);
}

TEST_CASE("an earlier timer armed while a worker sleeps in the driver wakes it to re-arm") {
  auto rt = Runtime::multi_thread(2);
  auto far = rt.spawn(sleep(1h));  // the driver's sleeper now waits an hour
  auto t0 = std::chrono::steady_clock::now();
  rt.block_on(rt.spawn(sleep(20ms))).value();
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);
  far.abort();
}

TEST_CASE("destroying a runtime destroys its sleeping tasks and unlinks their timers") {
  int drops = 0;
  for (int kind = 0; kind < 2; ++kind) {
    auto rt = kind == 0 ? Runtime::current_thread() : Runtime::multi_thread(2);
    for (int i = 0; i < 100; ++i) {
      rt.spawn(then(sleep(1h), [d = std::make_shared<test::DropCounter>(&drops)] { return ready_future(0); }));
    }
    rt.block_on(sleep(5ms));  // the tasks ran and armed their timers
    CHECK(rt.live_tasks() == 100);
  }
  CHECK(drops == 200);
}

namespace {
// Forever: a blocking call, then a short sleep, with nothing to catch an
// error. Only a runtime that shuts down cleanly (cancelling it) ends it
// without an exception.
struct BlockingThenSleeping {
  using Output = void;
  std::atomic<int>* rounds;
  std::optional<BlockingHandle<void>> job;
  std::optional<Sleep> nap;

  Poll<void> poll(Context& cx) {
    for (;;) {
      if (nap) {
        if (nap->poll(cx).is_pending()) return pending;
        nap.reset();
      }
      if (!job) job.emplace(spawn_blocking([] {}));
      if (job->poll(cx).is_pending()) return pending;
      job.reset();
      ++*rounds;
      nap.emplace(sleep(100us));
    }
  }
};
}  // namespace

namespace {
// Wakes every waker handed to it, again and again, from a thread of its
// own, until stopped: wakes from outside that keep arriving while a
// runtime shuts down. It wakes copies, outside its lock.
class WakeStorm {
 public:
  WakeStorm()
      : thread_([this] {
          while (!stop_.load()) {
            std::vector<Waker> wakers;
            {
              std::lock_guard lock(mutex_);
              wakers = wakers_;
            }
            for (const Waker& waker : wakers) waker.wake_by_ref();
          }
        }) {}
  ~WakeStorm() {
    stop_ = true;
    thread_.join();
  }
  void add(const Waker& waker) {
    std::lock_guard lock(mutex_);
    wakers_.push_back(waker);
  }

 private:
  std::mutex mutex_;
  std::vector<Waker> wakers_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Pending forever, woken by the storm; counts where it is destroyed.
struct WokenFromOutside {
  using Output = void;
  WakeStorm* storm;
  std::atomic<int>* destroyed_here;
  std::atomic<int>* destroyed_elsewhere;
  std::thread::id here;
  bool registered = false;
  WokenFromOutside(WakeStorm* s, std::atomic<int>* h, std::atomic<int>* e)
      : storm(s), destroyed_here(h), destroyed_elsewhere(e), here(std::this_thread::get_id()) {}
  WokenFromOutside(WokenFromOutside&& other) noexcept
      : storm(other.storm),
        destroyed_here(std::exchange(other.destroyed_here, nullptr)),
        destroyed_elsewhere(other.destroyed_elsewhere),
        here(other.here) {}
  ~WokenFromOutside() {
    if (destroyed_here == nullptr) return;  // moved from
    ++*(std::this_thread::get_id() == here ? destroyed_here : destroyed_elsewhere);
  }
  Poll<void> poll(Context& cx) {
    if (!registered) {
      storm->add(cx.waker());
      registered = true;
    }
    return pending;
  }
};
}  // namespace

TEST_CASE("a runtime destroys its tasks' futures on its own thread, while wakes from other threads keep coming") {
  constexpr int kRounds = 20;
  constexpr int kTasks = 1000;
  std::atomic<int> here{0};
  std::atomic<int> elsewhere{0};
  for (int round = 0; round < kRounds; ++round) {
    WakeStorm storm;
    {
      auto rt = round % 2 == 0 ? Runtime::current_thread() : Runtime::multi_thread(2);
      for (int i = 0; i < kTasks; ++i) rt.spawn(WokenFromOutside(&storm, &here, &elsewhere));
      rt.block_on(sleep(1ms));  // the tasks ran and gave the storm their wakers
    }
    // Every future is gone once the runtime is: none waits for a wake.
    CHECK(here.load() + elsewhere.load() == (round + 1) * kTasks);
  }
  CHECK(elsewhere.load() == 0);
}

TEST_CASE("assigning a runtime over a busy one shuts the old one down as its destructor does") {
  test::Death death = test::run_in_child([] {
    std::atomic<int> rounds{0};
    RuntimeOptions options;
    options.unhandled_exception = UnhandledException::Terminate;  // a task that saw its driver go fails loudly
    auto rt = Runtime::multi_thread(2, options);
    for (int i = 0; i < 8; ++i) rt.spawn(BlockingThenSleeping{&rounds, {}, {}});
    while (rounds < 200) std::this_thread::sleep_for(1ms);
    rt = Runtime::multi_thread(2, options);
    // The new runtime is whole: it runs tasks, timers and blocking calls.
    auto inside = rt.enter();
    CHECK(rt.block_on(spawn_blocking([] { return 7; })) == 7);
    rt.block_on(sleep(1ms));
    if (rt.live_tasks() != 0) std::abort();
  });
  INFO(death.stderr_text);
  CHECK_FALSE(death.aborted);
  CHECK(death.stderr_text.empty());
}

TEST_CASE("assigning a current-thread runtime over a multi-thread one, and back, keeps each usable") {
  auto rt = Runtime::multi_thread(2);
  rt.block_on(sleep(1ms));
  rt = Runtime::current_thread();
  CHECK(rt.workers() == 1);
  rt.block_on(sleep(1ms));
  rt = Runtime::multi_thread(3);
  CHECK(rt.workers() == 3);
  auto inside = rt.enter();
  CHECK(rt.block_on(spawn_blocking([] { return 1; })) == 1);
}

TEST_CASE("a runtime waiting on a timer uses no CPU") {
  for (int kind = 0; kind < 2; ++kind) {
    auto rt = kind == 0 ? Runtime::current_thread() : Runtime::multi_thread(4);
    double before = test::process_cpu_ms();
    rt.block_on(sleep(200ms));
    CHECK(test::process_cpu_ms() - before < 20.0);
  }
}

TEST_CASE("spawning on a current-thread runtime from another thread is refused") {
  auto rt = Runtime::current_thread();
  std::string message;
  std::thread([&] {
    try {
      rt.spawn(ready_future(1));
    } catch (const std::logic_error& e) {
      message = e.what();
    }
  }).join();
  CHECK(message.find("not the executor's") != std::string::npos);
}

TEST_CASE("a runtime's workers are refused zero threads") {
  CHECK_THROWS_AS(Runtime::multi_thread(0), std::invalid_argument);
}

TEST_CASE("a multi-thread runtime made without a count has one worker per core") {
  unsigned cores = std::thread::hardware_concurrency();
  auto rt = Runtime::multi_thread();
  CHECK(rt.workers() == (cores == 0 ? 1 : cores));
  CHECK(rt.block_on(rt.spawn(ready_future(7))) == 7);
}

TEST_CASE("sleep in plain block_on throws NoRuntime") { CHECK_THROWS_AS(block_on(sleep(1ms)), NoRuntime); }

TEST_CASE("Driver::unpark from another thread ends a park with no timer") {
  Driver driver;
  std::thread other([&] {
    std::this_thread::sleep_for(10ms);
    driver.unpark();
  });
  driver.park();  // would block forever without the unpark
  other.join();
}

TEST_CASE("an unpark that comes before park makes it return at once") {
  Driver driver;
  driver.unpark();
  driver.park();
  driver.park_timeout(1ms);  // the token is consumed: this one times out
}

TEST_CASE("a task that destroys its own multi-thread runtime stops the program with the cause named") {
  test::Death death = test::run_in_child([] {
    std::optional<Runtime> rt(Runtime::multi_thread(2));
    rt->spawn(poll_fn<void>([&rt](Context&) -> Poll<void> {
      rt.reset();
      return ready();
    }));
    // The task stops the program. This thread waits outside the runtime:
    // inside block_on it would read the runtime the task is destroying (a
    // race TSan reports, which would end the child before the check does).
    for (;;) ::pause();
  });
  INFO("the child's stderr: " << death.stderr_text);
  CHECK(death.aborted);
  CHECK(death.stderr_text.find("destroyed by one of its own tasks") != std::string::npos);
}

TEST_CASE("a future that destroys its own current-thread runtime in block_on stops the program with the cause named") {
  test::Death death = test::run_in_child([] {
    std::optional<Runtime> rt(Runtime::current_thread());
    rt->block_on(poll_fn<void>([&rt](Context&) -> Poll<void> {
      rt.reset();
      return ready();
    }));
  });
  CHECK(death.aborted);
  CHECK(death.stderr_text.find("destroyed from inside one of its own tasks") != std::string::npos);
}

TEST_CASE("spawn and block_on on a moved-from runtime throw logic_error saying so") {
  auto rt = Runtime::current_thread();
  auto moved = std::move(rt);
  CHECK_THROWS_WITH_AS(rt.spawn(ready_future(1)), doctest::Contains("moved from"), std::logic_error);
  CHECK_THROWS_WITH_AS(rt.block_on(ready_future(1)), doctest::Contains("moved from"), std::logic_error);
  CHECK(moved.block_on(ready_future(2)) == 2);
}

TEST_CASE("spawn from a task's destructor while its runtime shuts down throws logic_error saying so") {
  struct SpawnsWhenDropped {
    SpawnsWhenDropped(Runtime* rt_in, std::string* error_in) : rt(rt_in), error(error_in) {}
    SpawnsWhenDropped(const SpawnsWhenDropped&) = delete;
    Runtime* rt;
    std::string* error;
    ~SpawnsWhenDropped() {
      try {
        (void)rt->spawn(ready_future(1));
      } catch (const std::logic_error& e) {
        *error = e.what();
      }
    }
  };
  std::string error;
  {
    auto rt = Runtime::current_thread();
    auto guard = std::make_shared<SpawnsWhenDropped>(&rt, &error);
    rt.spawn(pending_future<int>() | map([guard = std::move(guard)](int v) { return v; }));
    rt.block_on(yield_now());
  }
  CHECK(error.find("shutting down") != std::string::npos);
}
