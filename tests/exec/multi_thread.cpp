// The multi-thread scheduler on 1, 2 and 4 workers: no lost wake, no task
// run on two threads at once, overflow and stealing under load, idle
// workers that use no CPU, and no needless hand-offs between threads.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kWorkerCounts[] = {1, 2, 4};

// Voluntary context switches of every thread of this process so far.
long process_voluntary_switches() {
  long total = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream status(entry.path() / "status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) total += std::stol(line.substr(24));
    }
  }
  return total;
}

long thread_voluntary_switches() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_nvcsw;
}

std::chrono::nanoseconds process_cpu() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

void wake_storm(std::size_t workers) {
  constexpr int tasks = 5000;
  constexpr int wakes_per_thread = 10000;
  struct Slot {
    std::atomic<bool> running{false};
    std::atomic<bool> finish{false};
    test::SharedWakerSlot waker;
  };
  std::vector<Slot> slots(tasks);
  std::atomic<int> overlaps{0}, after_done{0}, first_polls{0};
  ThreadPool pool(workers);
  std::vector<JoinHandle<void>> handles;
  for (int i = 0; i < tasks; ++i) {
    Slot& slot = slots[i];
    handles.push_back(pool.spawn(poll_fn<void>([&, done = false, first = true](Context& cx) mutable -> Poll<void> {
      if (done) after_done++;
      if (slot.running.exchange(true)) overlaps++;
      slot.waker.store(cx.waker());
      if (first) {
        first = false;
        first_polls++;
      }
      if (cx.waker().will_wake(cx.waker()) && (first_polls.load() & 7) == 0) {
        cx.waker().wake_by_ref();  // some wake themselves too: a yield racing the storm
      }
      slot.running = false;
      if (slot.finish.load()) {
        done = true;
        return ready();
      }
      return pending;
    })));
  }
  while (first_polls.load() < tasks) std::this_thread::yield();  // every task has stored a waker
  std::vector<std::thread> wakers;
  for (int t = 0; t < 4; ++t) {
    wakers.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < wakes_per_thread; ++i) slots[rng() % tasks].waker.wake();
    });
  }
  for (auto& t : wakers) t.join();
  for (Slot& slot : slots) {
    slot.finish = true;
    slot.waker.wake();  // a lost wake here would leave block_on below waiting forever
  }
  pool.block_on(join_all(std::move(handles)));
  CHECK(overlaps == 0);
  CHECK(after_done == 0);
}

}  // namespace

TEST_CASE("a wake storm loses no wake and never runs a task on two threads at once, on 1, 2 and 4 workers") {
  for (std::size_t workers : kWorkerCounts) {
    CAPTURE(workers);
    wake_storm(workers);
  }
}

TEST_CASE("a million tasks spawned and joined from inside a task, on 1, 2 and 4 workers") {
  for (std::size_t workers : kWorkerCounts) {
    CAPTURE(workers);
    ThreadPool pool(workers);
    constexpr std::uint64_t n = 1'000'000;
    auto sum = pool.block_on(pool.spawn(lazy([] {
                                          std::vector<JoinHandle<std::uint64_t>> handles;
                                          handles.reserve(n);
                                          for (std::uint64_t i = 0; i < n; ++i)
                                            handles.push_back(pollux::spawn(ready_future(i)));
                                          return join_all(std::move(handles));
                                        })
                                        | then([](auto joined) { return joined; })));
    std::uint64_t total = 0;
    for (auto& v : sum.value()) total += v.value();
    CHECK(total == n * (n - 1) / 2);
    // The spawning task's worker retires it just after its handle is woken.
    while (pool.live_tasks() != 0) std::this_thread::yield();
  }
}

TEST_CASE("a task that spawns far more than a local queue holds sees every spawned task run") {
  // Spawned from a task, they fill its worker's queue (256) and overflow,
  // half a queue at a time, to the inject queue; the others steal.
  for (std::size_t workers : kWorkerCounts) {
    CAPTURE(workers);
    ThreadPool pool(workers);
    std::atomic<int> ran{0};
    constexpr int n = 20'000;
    pool.block_on(pool.spawn(poll_fn<void>([&](Context&) -> Poll<void> {
          for (int i = 0; i < n; ++i) {
            pollux::spawn(poll_fn<void>([&](Context&) -> Poll<void> {
              ran.fetch_add(1, std::memory_order_relaxed);
              return ready();
            }));
          }
          return ready();
        })))
        .value();
    while (pool.live_tasks() != 0) std::this_thread::yield();
    CHECK(ran.load() == n);
  }
}

TEST_CASE("a task spawned from outside while every worker parks is never lost") {
  // Each round ends with every worker going back to sleep, so each spawn
  // races the workers' last look at the queues before they park.
  for (std::size_t workers : kWorkerCounts) {
    CAPTURE(workers);
    ThreadPool pool(workers);
    std::mutex mutex;
    std::condition_variable cv;
    int done = 0;
    for (int round = 1; round <= 3000; ++round) {
      pool.spawn(poll_fn<void>([&](Context&) -> Poll<void> {
        // Notified under the lock: the waiter may destroy `cv` as soon as
        // it sees the count.
        std::lock_guard lock(mutex);
        ++done;
        cv.notify_one();
        return ready();
      }));
      std::unique_lock lock(mutex);
      cv.wait(lock, [&] { return done == round; });  // a lost wake-up hangs here
    }
    CHECK(done == 3000);
  }
}

TEST_CASE("two tasks waking each other across workers never lose a wake") {
  for (std::size_t workers : kWorkerCounts) {
    CAPTURE(workers);
    auto rt = Runtime::multi_thread(workers);
    constexpr int rounds = 20'000;
    auto [ping_tx, ping_rx] = mpsc::unbounded_channel<int>();
    auto [pong_tx, pong_rx] = mpsc::unbounded_channel<int>();
    // The ponger answers every ping until the pings end.
    auto ponger = rt.spawn(
        poll_fn<int>([rx = std::move(ping_rx), tx = std::move(pong_tx), seen = 0](Context& cx) mutable -> Poll<int> {
          for (;;) {
            auto got = rx.poll_recv(cx);
            if (got.is_pending()) return pending;
            if (!got.value()) return ready(seen);
            ++seen;
            REQUIRE(tx.send(*got.value()).has_value());
          }
        }));
    // The pinger, a task of its own, sends one ping at a time.
    auto pinger = rt.spawn(poll_fn<int>([tx = std::move(ping_tx), rx = std::move(pong_rx), sent = 0,
                                         awaiting = false](Context& cx) mutable -> Poll<int> {
      for (;;) {
        if (!awaiting) {
          if (sent == rounds) return ready(sent);
          REQUIRE(tx.send(sent++).has_value());
          awaiting = true;
        }
        auto got = rx.poll_recv(cx);
        if (got.is_pending()) return pending;
        REQUIRE(got.value() == std::optional<int>(sent - 1));
        awaiting = false;
      }
    }));
    CHECK(rt.block_on(std::move(pinger)) == rounds);
    CHECK(rt.block_on(std::move(ponger)) == rounds);  // the pinger's sender is gone with it
  }
}

TEST_CASE("an idle 4-worker runtime uses no CPU") {
  auto rt = Runtime::multi_thread(4);
  auto handle = rt.spawn(pending_future<int>());  // a task that waits forever
  rt.block_on(yield_now());
  std::this_thread::sleep_for(20ms);  // the workers settle into their sleep
  auto before = process_cpu();
  std::this_thread::sleep_for(200ms);
  // Four spinning workers would burn 200 ms or more (two cores); parked
  // ones, in the driver and on their futexes, burn nothing.
  CHECK(process_cpu() - before < 20ms);
}

TEST_CASE("a socket echo ping-pong on a 4-worker runtime wakes at most one extra thread per round trip") {
  // The worker that sleeps in the driver wakes for the request and answers
  // it itself: one voluntary switch per round trip on the runtime's side.
  // Handing the socket's task to a second thread would add that thread's
  // sleep, a second switch. The client is a plain thread with a blocking
  // socket (one switch per round trip of its own, subtracted).
  auto listener = TcpListener::bind("127.0.0.1:0");  // outlives the runtime's task that borrows it
  auto rt = Runtime::multi_thread(4);
  rt.spawn(test::AcceptAndEcho(listener, 1));
  constexpr int rounds = 2000;
  long runtime_switches = 0;
  std::thread client([&] {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    SocketAddr addr = listener.local_addr();
    REQUIRE(::connect(fd, addr.native(), addr.native_length()) == 0);
    char message[64] = {};
    auto round_trip = [&] {
      REQUIRE(::send(fd, message, sizeof message, 0) == static_cast<ssize_t>(sizeof message));
      std::size_t got = 0;
      while (got < sizeof message) {
        ssize_t n = ::recv(fd, message + got, sizeof message - got, 0);
        REQUIRE(n > 0);
        got += static_cast<std::size_t>(n);
      }
    };
    for (int i = 0; i < 100; ++i) round_trip();  // warm-up: the workers settle
    long all_before = process_voluntary_switches();
    long mine_before = thread_voluntary_switches();
    for (int i = 0; i < rounds; ++i) round_trip();
    long mine = thread_voluntary_switches() - mine_before;
    runtime_switches = process_voluntary_switches() - all_before - mine;
    ::close(fd);
  });
  client.join();
  MESSAGE("runtime voluntary switches per round trip: " << static_cast<double>(runtime_switches) / rounds);
  CHECK(runtime_switches <= 2 * rounds);
}
