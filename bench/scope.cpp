// scope VARIANT [N]: pollux::scope against plain spawn + join.
//   plain_ct / plain_mt    spawn N trivial tasks, then await each JoinHandle
//   scoped_ct / scoped_mt  a scope whose body spawns N trivial children; the
//                          scope's future ends when they all have
//   destroy                N scopes, each with 1,000 children that yield
//                          forever on a 2-worker pool, destroyed mid-flight by
//                          a task on one of the workers;
//                          ns per destruction, and its p50/p99/max in µs
// ct: LocalExecutor; mt: a 2-worker ThreadPool, spawning from the future its
// block_on drives (tasks go through the inject queue), as spawn_join does.
#include <algorithm>
#include <atomic>
#include <functional>
#include <optional>
#include <vector>

#include <pollux/pollux.hpp>

#include "common.hpp"

using namespace pollux;

namespace {

// The child of every row: one increment of a counter it borrows.
auto bump(std::uint64_t& counter) {
  return lazy([&counter] { ++counter; });
}
auto bump_atomic(std::atomic<std::uint64_t>& counter) {
  return lazy([&counter] { counter.fetch_add(1, std::memory_order_relaxed); });
}

// Spawn them all, then join in order (bench/spawn_join.cpp with void tasks).
template <class Make>
class PlainSpawnJoin {
 public:
  using Output = void;
  PlainSpawnJoin(std::uint64_t n, Make make) : n_(n), make_(make) {}
  Poll<void> poll(Context& cx) {
    if (handles_.empty()) {
      handles_.reserve(n_);
      for (std::uint64_t i = 0; i < n_; ++i) handles_.push_back(pollux::spawn(make_()));
    }
    while (next_ < handles_.size()) {
      auto joined = handles_[next_].poll(cx);
      if (joined.is_pending()) return pending;
      if (!joined.value().has_value()) bench::die("a task was cancelled");
      ++next_;
    }
    return ready();
  }

 private:
  std::uint64_t n_;
  Make make_;
  std::size_t next_ = 0;
  std::vector<JoinHandle<void>> handles_{};
};

template <class Make>
auto scoped(std::uint64_t n, Make make) {
  return pollux::scope([n, make](Scope& scope) {
    for (std::uint64_t i = 0; i < n; ++i) scope.spawn(make());
    return ready_future();
  });
}

// A child that never ends: it wakes itself at each poll, so that the two
// workers are always polling some of them.
struct YieldForever {
  using Output = void;
  Poll<void> poll(Context& cx) {
    cx.waker().wake_by_ref();
    return pending;
  }
};

using ForeverBody = std::function<PendingFuture<int>(Scope&)>;

// N scopes of 1,000 busy children on a 2-worker pool, each destroyed after
// its children had a few turns; the destruction times, in ns. The owner is
// a task on one of the workers, so that no third thread competes for the
// machine's two cores.
std::vector<double> destroy_times(ThreadPool& pool, std::uint64_t n) {
  std::vector<double> times;
  times.reserve(n);
  for (std::uint64_t round = 0; round < n; ++round) {
    std::optional<ScopeFuture<ForeverBody>> scope;
    auto owner = pool.spawn(poll_fn<void>([&, turns = 0](Context& cx) mutable -> Poll<void> {
      if (!scope) {
        scope.emplace(ForeverBody([](Scope& s) {
          for (int i = 0; i < 1000; ++i) s.spawn(YieldForever{});
          return pending_future<int>();
        }));
        (void)scope->poll(cx);
      }
      if (turns++ < 20) {
        cx.waker().wake_by_ref();
        return pending;
      }
      auto t0 = bench::Clock::now();
      scope.reset();
      times.push_back(bench::secs_since(t0) * 1e9);
      return ready();
    }));
    if (!pool.block_on(std::move(owner)).has_value()) bench::die("the owner was cancelled");
  }
  return times;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

// Seconds for N children on `executor`, plain or scoped, after a warm-up
// run of N/10; `counter` is reset between the two.
template <class Executor, class Counter, class Make>
double measure(Executor& executor, bool plain, std::uint64_t n, Counter& counter, Make make) {
  auto once = [&](std::uint64_t count) {
    if (plain) {
      executor.block_on(PlainSpawnJoin(count, make));
    } else {
      executor.block_on(scoped(count, make));
    }
  };
  once(n / 10);
  counter = 0;
  auto t0 = bench::Clock::now();
  once(n);
  return bench::secs_since(t0);
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "scoped_ct");
  std::uint64_t n = args.num(1, 1'000'000);
  if (variant == "destroy") {
    ThreadPool pool(2);
    destroy_times(pool, std::max<std::uint64_t>(n / 10, 1));  // warms the slab and the queues
    auto t0 = bench::Clock::now();
    std::vector<double> times = destroy_times(pool, n);
    double seconds = bench::secs_since(t0);
    double total = 0;
    for (double t : times) total += t;
    bench::emit("scope", variant, n, total / 1e9,
                {{"p50_us", percentile(times, 0.50) / 1e3},
                 {"p99_us", percentile(times, 0.99) / 1e3},
                 {"max_us", percentile(times, 1.0) / 1e3},
                 {"wall_s", seconds}});
    return 0;
  }
  bool ct = variant.ends_with("_ct");
  if (!ct && !variant.ends_with("_mt"))
    bench::die("unknown variant '" + variant + "' (plain_ct, plain_mt, scoped_ct, scoped_mt, destroy)");
  bool plain = variant.starts_with("plain");
  if (!plain && !variant.starts_with("scoped")) bench::die("unknown variant '" + variant + "'");
  double seconds = 0;
  std::uint64_t done = 0;
  if (ct) {
    LocalExecutor ex;
    std::uint64_t counter = 0;
    seconds = measure(ex, plain, n, counter, [&counter] { return bump(counter); });
    done = counter;
  } else {
    ThreadPool pool(2);
    std::atomic<std::uint64_t> counter{0};
    seconds = measure(pool, plain, n, counter, [&counter] { return bump_atomic(counter); });
    done = counter.load();
  }
  if (done != n) bench::die("not every task ran");
  bench::emit("scope", variant, n, seconds);
}
