// timers [sleep_fu|sleep_spawn|timeout_churn|timeout_churn_armed] [N=1000000]
// The peers' timers workload (../shared/peers/rust/bench/src/bin/timers.rs),
// on a current-thread Runtime, inside one spawned task.
// sleep_fu:    N sleeps, deadlines uniform over 1..1000 ms (splitmix64,
//              seed 42), all pending at once in one FuturesUnordered.
// sleep_spawn: the same deadlines, one spawned task per sleep, JoinHandles
//              awaited in order.
//   -> ns_per_op = process CPU ns per timer; wall_minus_1s_ms = wall - 1 s.
// timeout_churn:       timeout(10 s, ready(i)) N times: the inner future is
//                      polled first, so the timer is never armed.
// timeout_churn_armed: timeout(10 s, {yield once; i}) N times: the timer is
//                      armed in the wheel and cancelled each time.
//   -> ns_per_op = wall ns per iteration.
// Every variant also reports the heap allocations made in the measured
// part (a counting operator new): the churns promise none.
#include <pollux/pollux.hpp>

#include <time.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <optional>

#include "common.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {
std::atomic<std::uint64_t> allocations{0};
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace {

double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

Duration deadline_delay(bench::Rng& rng) { return std::chrono::microseconds(1'000 + rng.below(999'001)); }

struct Measured {
  double wall, cpu;
  std::uint64_t allocations;
};

// The peer's `async fn sleeps`, by hand.
class Sleeps {
 public:
  using Output = Measured;
  Sleeps(std::uint64_t n, bool spawn) : n_(n), spawn_(spawn) {}

  Poll<Measured> poll(Context& cx) {
    if (state_ == State::Start) {
      wall0_ = bench::Clock::now();
      cpu0_ = cpu_now();
      allocations0_ = allocations.load();
      bench::Rng rng(bench::kSeed);
      if (spawn_) {
        handles_.reserve(n_);
        for (std::uint64_t i = 0; i < n_; ++i) handles_.push_back(pollux::spawn(sleep(deadline_delay(rng))));
      } else {
        for (std::uint64_t i = 0; i < n_; ++i) set_.push(sleep(deadline_delay(rng)));
      }
      state_ = State::Waiting;
    }
    if (spawn_) {
      for (; next_ < handles_.size(); ++next_) {
        if (handles_[next_].poll(cx).is_pending()) return pending;
      }
    } else {
      for (;;) {
        auto item = set_.poll_next(cx);
        if (item.is_pending()) return pending;
        if (!std::move(item).value()) break;
        ++done_;
      }
      if (done_ != n_) bench::die("sleep_fu: not every sleep completed");
    }
    return ready(Measured{bench::secs_since(wall0_), cpu_now() - cpu0_, allocations.load() - allocations0_});
  }

 private:
  enum class State { Start, Waiting };
  State state_ = State::Start;
  std::uint64_t n_;
  bool spawn_;
  bench::Clock::time_point wall0_;
  double cpu0_ = 0;
  std::uint64_t allocations0_ = 0, done_ = 0;
  std::size_t next_ = 0;
  FuturesUnordered<Sleep> set_;
  std::vector<JoinHandle<void>> handles_;
};

// The peer's `async fn churn`: one timeout after another.
template <bool Armed>
class Churn {
 public:
  using Output = Measured;
  explicit Churn(std::uint64_t n) : n_(n) {}

  Poll<Measured> poll(Context& cx) {
    if (i_ == 0 && !current_) {
      wall0_ = bench::Clock::now();
      allocations0_ = allocations.load();
    }
    while (i_ < n_) {
      if (!current_) current_.emplace(make(i_));
      auto result = current_->poll(cx);
      if (result.is_pending()) return pending;
      sum_ += std::move(result).value().value();
      current_.reset();
      ++i_;
    }
    Measured m{bench::secs_since(wall0_), 0, allocations.load() - allocations0_};
    if (sum_ != n_ * (n_ - 1) / 2) bench::die("churn: wrong sum");
    return ready(m);
  }

 private:
  static auto make(std::uint64_t i) {
    if constexpr (Armed) {
      return timeout(10s, map(yield_now(), [i] { return i; }));
    } else {
      return timeout(10s, ready_future(bench::black_box(i)));
    }
  }

  std::uint64_t n_, i_ = 0, sum_ = 0;
  bench::Clock::time_point wall0_;
  std::uint64_t allocations0_ = 0;
  std::optional<decltype(make(0))> current_;
};

template <class F>
Measured run_in_task(Runtime& rt, F warm_up, F measured) {
  rt.block_on(rt.spawn(std::move(warm_up))).value();
  return rt.block_on(rt.spawn(std::move(measured))).value();
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "sleep_fu");
  std::uint64_t n = args.num(1, 1'000'000);
  auto rt = Runtime::current_thread();
  if (variant == "sleep_fu" || variant == "sleep_spawn") {
    bool spawn = variant == "sleep_spawn";
    Measured m = run_in_task(rt, Sleeps(n / 10, spawn), Sleeps(n, spawn));
    bench::emit("timers", variant, n, m.cpu,
                {{"wall_ms", m.wall * 1e3},
                 {"wall_minus_1s_ms", m.wall * 1e3 - 1000},
                 {"cpu_ms", m.cpu * 1e3},
                 {"allocations", static_cast<double>(m.allocations)}});
  } else if (variant == "timeout_churn") {
    Measured m = run_in_task(rt, Churn<false>(n / 10), Churn<false>(n));
    bench::emit("timers", variant, n, m.wall, {{"allocations", static_cast<double>(m.allocations)}});
  } else if (variant == "timeout_churn_armed") {
    Measured m = run_in_task(rt, Churn<true>(n / 10), Churn<true>(n));
    bench::emit("timers", variant, n, m.wall, {{"allocations", static_cast<double>(m.allocations)}});
  } else {
    bench::die("unknown variant " + variant);
  }
}
