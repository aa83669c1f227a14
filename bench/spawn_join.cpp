// spawn_join [ct|mt|mt_task] [N=1000000]
// Spawn N trivial tasks (each returns its index), then await every
// JoinHandle in order and sum. ct: LocalExecutor, spawning from the future
// block_on drives. (mt, mt_task: the 2-worker ThreadPool, when it exists.)
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
      sum_ += value.value();
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
  if (variant != "ct") bench::die("unknown variant '" + variant + "' (ct)");
  LocalExecutor ex;
  ex.block_on(SpawnJoin(n / 10));
  auto t0 = bench::Clock::now();
  std::uint64_t sum = ex.block_on(SpawnJoin(n));
  double seconds = bench::secs_since(t0);
  if (sum != n * (n - 1) / 2) bench::die("wrong sum");
  bench::emit("spawn_join", "from_block_on", n, seconds);
}
