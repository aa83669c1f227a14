// spawn_join [ct|mt|mt_task] [N=1000000]
// Spawn N trivial tasks (each returns its index), then await every
// JoinHandle in order and sum. ct: LocalExecutor, spawning from the future
// its block_on drives; mt: a 2-worker ThreadPool, spawning from the future
// its block_on drives (tasks go through the inject queue); mt_task: the
// same from a task running on a worker (its local queue).
#include <pollux/pollux.hpp>

#include "common.hpp"

using namespace pollux;

namespace {

// The peer's `async fn spawn_join`, by hand: spawn them all, then join in order.
class SpawnJoin {
 public:
  using Output = std::uint64_t;
  explicit SpawnJoin(std::uint64_t n) : n_(n) {}

  Poll<std::uint64_t> poll(Context& cx) {
    if (state_ == State::Spawning) {
      handles_.reserve(n_);
      for (std::uint64_t i = 0; i < n_; ++i) handles_.push_back(pollux::spawn(ready_future(i)));
      state_ = State::Joining;
    }
    while (next_ < handles_.size()) {
      auto value = handles_[next_].poll(cx);
      if (value.is_pending()) return pending;
      sum_ += value.value().value();  // the peer unwraps each JoinHandle too
      ++next_;
    }
    return ready(sum_);
  }

 private:
  enum class State { Spawning, Joining };
  State state_ = State::Spawning;
  std::uint64_t n_, sum_ = 0;
  std::size_t next_ = 0;
  std::vector<JoinHandle<std::uint64_t>> handles_;
};

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "ct");
  std::uint64_t n = args.num(1, 1'000'000);
  std::uint64_t sum = 0;
  double seconds = 0;
  const char* label = "from_block_on";
  if (variant == "ct") {
    LocalExecutor ex;
    ex.block_on(SpawnJoin(n / 10));
    auto t0 = bench::Clock::now();
    sum = ex.block_on(SpawnJoin(n));
    seconds = bench::secs_since(t0);
  } else if (variant == "mt" || variant == "mt_task") {
    ThreadPool pool(2);
    bool in_task = variant == "mt_task";
    auto run = [&](std::uint64_t count) {
      if (in_task) return pool.block_on(pool.spawn(SpawnJoin(count))).value();
      return pool.block_on(SpawnJoin(count));
    };
    run(n / 10);
    auto t0 = bench::Clock::now();
    sum = run(n);
    seconds = bench::secs_since(t0);
    if (in_task) label = "from_task";
  } else {
    bench::die("unknown variant '" + variant + "' (ct, mt, mt_task)");
  }
  if (sum != n * (n - 1) / 2) bench::die("wrong sum");
  bench::emit("spawn_join", label, n, seconds);
}
