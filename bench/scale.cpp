// scale VARIANT WORKERS [N]
// VARIANT: spawn_many_local | spawn_many_remote_idle | spawn_many_remote_busy1
//          | spawn_many_remote_busy2 | ping_pong | yield_many | chained_spawn
//          | busy_self_wake
// WORKERS: worker threads of Runtime::multi_thread (1, 2, 4, ...).
// N defaults: 2e6 (ping_pong, busy_self_wake), 2e7 (yield_many), 5e6
// (chained_spawn), 2e5 (spawn_many_remote_busy2), 3e6 (the others).
//
// tokio's multi-thread scheduler benchmarks (benches/rt_multi_threaded.rs)
// with the worker count as a parameter, plus busy_self_wake: the same
// workloads, rounds, checks and JSON line as ../shared/peers/rust/bench/src/
// bin/scale.rs (its README says what each one does). "The channel" is a
// blocking queue on which tasks tell the main thread, blocked in recv, that
// a round is over. "From outside" is Runtime::spawn on the main thread;
// "inside block_on" is pollux::spawn in the future given to block_on. The
// JSON line has impl "pollux-multi-thread-<W>w", workers = W, and per_round
// (busy_self_wake: tasks).
#include <pollux/pollux.hpp>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "common.hpp"

using namespace pollux;

namespace {

constexpr std::uint64_t kSpawnRound = 10'000;
constexpr std::uint64_t kBusy2Round = 1'000;
constexpr std::uint64_t kPingsRound = 1'000;
constexpr std::uint64_t kYieldTasks = 200;
constexpr std::uint64_t kYieldsPerTask = 1'000;
constexpr std::uint64_t kChainLen = 1'000;
constexpr std::uint64_t kSelfWakeTasksPerWorker = 8;
constexpr double kSpinTargetNs = 1'000;
constexpr auto kStall = std::chrono::microseconds(10);
constexpr auto kStarveLimit = std::chrono::seconds(2);

// Globals: the background tasks and the watchdog may outlive main's frame.
std::atomic<bool> flag{true};
std::atomic<std::uint64_t> rounds_done{0};

std::uint64_t rounds(std::uint64_t n, std::uint64_t per_round) { return std::max<std::uint64_t>(1, n / per_round); }

void check(bool ok, const char* what) {
  if (!ok) bench::die(std::string("scale: check failed: ") + what);
}

// std::sync::mpsc::sync_channel's part that the peer uses: send, and a
// blocking recv.
template <class T>
class Channel {
 public:
  void send(T value) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(value));
    }
    ready_.notify_one();
  }
  T recv() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !queue_.empty(); });
    T value = std::move(queue_.front());
    queue_.pop_front();
    return value;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<T> queue_;
};

// About 10 us of busy waiting that keeps offering the CPU to the OS.
void stall() {
  auto t0 = bench::Clock::now();
  while (bench::Clock::now() - t0 < kStall) std::this_thread::yield();
}

inline std::uint64_t spin(std::uint64_t x, std::uint64_t k) {
  for (std::uint64_t i = 0; i < k; ++i) x = bench::black_box(x) * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

// K for about 1 us of spin, and one spin(K) as measured.
std::pair<std::uint64_t, double> calibrate_spin() {
  constexpr std::uint64_t kSteps = 100'000;
  double best = 1e300;
  std::uint64_t x = 1;
  for (int i = 0; i < 20; ++i) {
    auto t0 = bench::Clock::now();
    x = spin(x, kSteps);
    best = std::min(best, bench::secs_since(t0) * 1e9 / kSteps);
  }
  auto k = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(kSpinTargetNs / best)));
  double spin_ns = 1e300;
  for (int i = 0; i < 5; ++i) {
    auto t0 = bench::Clock::now();
    for (int j = 0; j < 1'000; ++j) x = spin(x, k);
    spin_ns = std::min(spin_ns, bench::secs_since(t0) * 1e9 / 1'000);
  }
  bench::black_box(x);
  return {k, spin_ns};
}

std::uint64_t spawn_many_local(Runtime& rt, std::uint64_t n_rounds) {
  Channel<bool> done;
  std::atomic<std::uint64_t> remaining{0};
  std::uint64_t spawned = 0;
  for (std::uint64_t r = 0; r < n_rounds; ++r) {
    remaining.store(kSpawnRound, std::memory_order_relaxed);
    rt.block_on(poll_fn<void>([&](Context&) -> Poll<void> {
      for (std::uint64_t i = 0; i < kSpawnRound; ++i) {
        pollux::spawn(poll_fn<void>([&](Context&) -> Poll<void> {
          if (remaining.fetch_sub(1, std::memory_order_relaxed) == 1) done.send(true);
          return ready();
        }));
      }
      done.recv();
      return ready();
    }));
    check(remaining.load() == 0, "spawn_many_local: the counter is 0 after the round");
    spawned += kSpawnRound;
  }
  return spawned;
}

// `rounds_done` counts finished rounds for the starvation watchdog.
std::uint64_t spawn_many_remote(Runtime& rt, std::uint64_t n_rounds, std::uint64_t per_round,
                                std::atomic<std::uint64_t>& rounds_done) {
  std::vector<JoinHandle<void>> handles;
  handles.reserve(per_round);
  std::uint64_t joined = 0;
  for (std::uint64_t r = 0; r < n_rounds; ++r) {
    for (std::uint64_t i = 0; i < per_round; ++i) handles.push_back(rt.spawn(ready_future()));
    rt.block_on(poll_fn<void>([&, next = std::size_t{0}](Context& cx) mutable -> Poll<void> {
      for (; next < handles.size(); ++next) {
        if (handles[next].poll(cx).is_pending()) return pending;
        ++joined;
      }
      return ready();
    }));
    handles.clear();
    rounds_done.fetch_add(1, std::memory_order_relaxed);
  }
  return joined;
}

void starvation_watchdog(std::string variant, std::atomic<std::uint64_t>& rounds_done) {
  std::thread([variant, &rounds_done] {
    std::uint64_t last = rounds_done.load();
    auto since = bench::Clock::now();
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::uint64_t now = rounds_done.load();
      if (now != last) {
        last = now;
        since = bench::Clock::now();
      } else if (bench::Clock::now() - since >= kStarveLimit) {
        std::fprintf(
            stderr,
            "scale %s: no round finished within 2 s: the remotely spawned tasks are starved (after %llu rounds)\n",
            variant.c_str(), static_cast<unsigned long long>(now));
        std::_Exit(3);
      }
    }
  }).detach();
}

// while (flag) { yield_now(); stall(); }
void start_busy1(Runtime& rt, std::uint64_t workers, std::atomic<bool>& flag) {
  for (std::uint64_t i = 0; i < 2 * workers; ++i) {
    rt.spawn(poll_fn<void>([&flag, yielded = false](Context& cx) mutable -> Poll<void> {
      for (;;) {
        if (!flag.load(std::memory_order_relaxed)) return ready();
        if (!yielded) {
          yielded = true;
          cx.waker().wake_by_ref();
          return pending;
        }
        yielded = false;
        stall();
      }
    }));
  }
}

void busy2_link(std::atomic<bool>& flag) {
  pollux::spawn(poll_fn<void>([&flag](Context&) -> Poll<void> {
    if (flag.load(std::memory_order_relaxed)) {
      stall();
      busy2_link(flag);
    }
    return ready();
  }));
}

void start_busy2(Runtime& rt, std::uint64_t workers, std::atomic<bool>& flag) {
  for (std::uint64_t i = 0; i < workers; ++i) {
    rt.spawn(poll_fn<void>([&flag](Context&) -> Poll<void> {
      busy2_link(flag);
      return ready();
    }));
  }
}

// A ping: spawns its pong, sends on 1, waits on 2, counts down.
class Ping {
 public:
  using Output = void;
  Ping(Channel<bool>& done, std::atomic<std::uint64_t>& remaining) : done_(&done), remaining_(&remaining) {}

  Poll<void> poll(Context& cx) {
    if (state_ == State::Start) {
      auto [tx1, rx1] = oneshot::channel<bool>();
      auto [tx2, rx2] = oneshot::channel<bool>();
      pollux::spawn(poll_fn<void>([rx1 = std::move(rx1), tx2 = std::move(tx2)](Context& cx) mutable -> Poll<void> {
        if (rx1.poll(cx).is_pending()) return pending;
        (void)tx2.send(true);
        return ready();
      }));
      (void)tx1.send(true);
      reply_.emplace(std::move(rx2));
      state_ = State::Waiting;
    }
    auto reply = reply_->poll(cx);
    if (reply.is_pending()) return pending;
    check(reply.value().has_value(), "ping_pong: the pong answered");
    if (remaining_->fetch_sub(1, std::memory_order_relaxed) == 1) done_->send(true);
    return ready();
  }

 private:
  enum class State { Start, Waiting };
  State state_ = State::Start;
  Channel<bool>* done_;
  std::atomic<std::uint64_t>* remaining_;
  std::optional<oneshot::Receiver<bool>> reply_;
};

std::uint64_t ping_pong(Runtime& rt, std::uint64_t n_rounds) {
  Channel<bool> done;
  std::atomic<std::uint64_t> remaining{0};
  std::uint64_t pings = 0;
  for (std::uint64_t r = 0; r < n_rounds; ++r) {
    remaining.store(kPingsRound, std::memory_order_relaxed);
    rt.block_on(poll_fn<void>([&](Context&) -> Poll<void> {
      pollux::spawn(poll_fn<void>([&](Context&) -> Poll<void> {
        for (std::uint64_t i = 0; i < kPingsRound; ++i) pollux::spawn(Ping(done, remaining));
        return ready();
      }));
      done.recv();
      return ready();
    }));
    check(remaining.load() == 0, "ping_pong: the counter is 0 after the round");
    pings += kPingsRound;
  }
  return pings;
}

std::uint64_t yield_many(Runtime& rt, std::uint64_t n_rounds) {
  Channel<std::uint64_t> counts;
  std::uint64_t yields = 0;
  for (std::uint64_t r = 0; r < n_rounds; ++r) {
    for (std::uint64_t t = 0; t < kYieldTasks; ++t) {
      rt.spawn(poll_fn<void>([&counts, count = std::uint64_t{0}, yielded = false](Context& cx) mutable -> Poll<void> {
        while (count < kYieldsPerTask) {
          if (!yielded) {  // yield_now(), by hand
            yielded = true;
            cx.waker().wake_by_ref();
            return pending;
          }
          yielded = false;
          ++count;
        }
        counts.send(count);
        return ready();
      }));
    }
    for (std::uint64_t t = 0; t < kYieldTasks; ++t) yields += counts.recv();
  }
  return yields;
}

// Chain task k (1-based).
void chain_link(Channel<std::uint64_t>& done, std::uint64_t k) {
  if (k == kChainLen) {
    done.send(k);
    return;
  }
  pollux::spawn(poll_fn<void>([&done, k](Context&) -> Poll<void> {
    chain_link(done, k + 1);
    return ready();
  }));
}

std::uint64_t chained_spawn(Runtime& rt, std::uint64_t n_rounds) {
  Channel<std::uint64_t> done;
  std::uint64_t spawned = 0;
  for (std::uint64_t r = 0; r < n_rounds; ++r) {
    std::uint64_t len = rt.block_on(poll_fn<std::uint64_t>([&](Context&) -> Poll<std::uint64_t> {
      pollux::spawn(poll_fn<void>([&done](Context&) -> Poll<void> {
        chain_link(done, 1);
        return ready();
      }));
      return ready(done.recv());
    }));
    check(len == kChainLen, "chained_spawn: the chain reached its end");
    spawned += len;
  }
  return spawned;
}

// Task t: x = t, then `per_task` times { x = spin(x); yield }.
struct SelfWake {
  using Output = std::pair<std::uint64_t, std::uint64_t>;
  std::uint64_t x, per_task, k, count = 0;
  bool yielded = false;

  Poll<Output> poll(Context& cx) {
    while (count < per_task) {
      if (!yielded) {
        x = spin(x, k);
        yielded = true;
        cx.waker().wake_by_ref();
        return pending;
      }
      yielded = false;
      ++count;
    }
    return ready(Output{count, x});
  }
};

std::uint64_t busy_self_wake(Runtime& rt, std::uint64_t tasks, std::uint64_t per_task, std::uint64_t k) {
  std::vector<JoinHandle<SelfWake::Output>> handles;
  std::uint64_t total = 0;
  rt.block_on(poll_fn<void>([&, next = std::size_t{0}](Context& cx) mutable -> Poll<void> {
    if (handles.empty()) {
      for (std::uint64_t t = 0; t < tasks; ++t) handles.push_back(pollux::spawn(SelfWake{t, per_task, k}));
    }
    for (; next < handles.size(); ++next) {
      auto out = handles[next].poll(cx);
      if (out.is_pending()) return pending;
      bench::black_box(out.value().value().second);
      total += out.value().value().first;
    }
    return ready();
  }));
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "spawn_many_local");
  std::uint64_t workers = args.num(1, 2);
  if (workers < 1) bench::die("scale: WORKERS must be at least 1");
  std::uint64_t default_n = 3'000'000;
  if (variant == "ping_pong" || variant == "busy_self_wake") default_n = 2'000'000;
  if (variant == "yield_many") default_n = 20'000'000;
  if (variant == "chained_spawn") default_n = 5'000'000;
  if (variant == "spawn_many_remote_busy2") default_n = 200'000;
  std::uint64_t n = args.num(2, default_n);
  std::vector<std::pair<const char*, double>> extra{{"workers", static_cast<double>(workers)}};

  std::uint64_t spin_k = 0;
  if (variant == "busy_self_wake") {  // before any runtime thread exists
    auto [k, spin_ns] = calibrate_spin();
    spin_k = k;
    extra.emplace_back("spin_iters", static_cast<double>(k));
    extra.emplace_back("spin_ns", spin_ns);
  }

  Runtime rt = Runtime::multi_thread(workers);
  std::uint64_t per_round = 0;
  if (variant == "spawn_many_local" || variant == "spawn_many_remote_idle") {
    per_round = kSpawnRound;
  } else if (variant == "spawn_many_remote_busy1") {
    start_busy1(rt, workers, flag);
    extra.emplace_back("busy_tasks", static_cast<double>(2 * workers));
    per_round = kSpawnRound;
  } else if (variant == "spawn_many_remote_busy2") {
    start_busy2(rt, workers, flag);
    starvation_watchdog(variant, rounds_done);
    extra.emplace_back("busy_tasks", static_cast<double>(workers));
    per_round = kBusy2Round;
  } else if (variant == "ping_pong") {
    per_round = kPingsRound;
  } else if (variant == "yield_many") {
    per_round = kYieldTasks * kYieldsPerTask;
  } else if (variant == "chained_spawn") {
    per_round = kChainLen;
  } else if (variant == "busy_self_wake") {
    per_round = kSelfWakeTasksPerWorker * workers;
  } else {
    bench::die("scale: unknown variant " + variant);
  }

  auto run = [&](std::uint64_t ops) -> std::uint64_t {
    std::uint64_t r = rounds(ops, per_round);
    if (variant == "spawn_many_local") return spawn_many_local(rt, r);
    if (variant == "ping_pong") return ping_pong(rt, r);
    if (variant == "yield_many") return yield_many(rt, r);
    if (variant == "chained_spawn") return chained_spawn(rt, r);
    if (variant == "busy_self_wake") return busy_self_wake(rt, per_round, r, spin_k);
    return spawn_many_remote(rt, r, per_round, rounds_done);
  };

  check(run(n / 10) == rounds(n / 10, per_round) * per_round, "the warm-up did all its operations");
  std::uint64_t expected = rounds(n, per_round) * per_round;
  auto t0 = bench::Clock::now();
  std::uint64_t done = run(n);
  double seconds = bench::secs_since(t0);
  check(done == expected, "the measured run did all its operations");
  flag.store(false, std::memory_order_relaxed);

  extra.emplace_back(variant == "busy_self_wake" ? "tasks" : "per_round", static_cast<double>(per_round));
  std::string impl = "pollux-multi-thread-" + std::to_string(workers) + "w";
  bench::emit("scale", variant, done, seconds, extra, impl.c_str());
}
