// timer_lateness [sleep] [N=1000]
// The peers' timer_lateness workload: one spawned task on a current-thread
// Runtime sleeps N times in a row, each sleep uniform over 1..20 ms in µs
// steps (splitmix64, seed 42, the peers' sequence): deadline = now + d,
// sleep_until(deadline). Lateness = (time the task resumes) - deadline.
// Warm-up: the first N/10 sleeps of the same sequence. Prints p50, p90,
// p99, max, mean and min in µs; ns_per_op = p50 in ns.
#include <pollux/pollux.hpp>

#include <algorithm>
#include <optional>
#include <vector>

#include "common.hpp"

using namespace pollux;

namespace {

class Sleeps {
 public:
  using Output = std::vector<std::int64_t>;
  explicit Sleeps(std::uint64_t n) : n_(n), rng_(bench::kSeed) { late_.reserve(n); }

  Poll<Output> poll(Context& cx) {
    while (late_.size() < n_) {
      if (!sleep_) {
        deadline_ = bench::Clock::now() + std::chrono::microseconds(1'000 + rng_.below(19'001));
        sleep_.emplace(sleep_until(deadline_));
      }
      if (sleep_->poll(cx).is_pending()) return pending;
      late_.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(bench::Clock::now() - deadline_).count());
      sleep_.reset();
    }
    return ready(std::move(late_));
  }

 private:
  std::uint64_t n_;
  bench::Rng rng_;
  Output late_;
  bench::Clock::time_point deadline_;
  std::optional<Sleep> sleep_;
};

// Nearest-rank percentile (permille: 500 = p50) of sorted values.
std::int64_t pct(const std::vector<std::int64_t>& sorted, std::size_t permille) {
  std::size_t k = (permille * sorted.size() + 999) / 1000;
  return sorted[std::max<std::size_t>(k, 1) - 1];
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "sleep");
  std::uint64_t n = args.num(1, 1000);
  if (variant != "sleep") bench::die("unknown variant " + variant);
  auto rt = Runtime::current_thread();
  rt.block_on(rt.spawn(Sleeps(std::max<std::uint64_t>(n / 10, 1)))).value();
  auto t0 = bench::Clock::now();
  std::vector<std::int64_t> late = rt.block_on(rt.spawn(Sleeps(n))).value();
  double wall = bench::secs_since(t0);
  std::sort(late.begin(), late.end());
  double mean = 0;
  for (auto x : late) mean += static_cast<double>(x);
  mean /= static_cast<double>(late.size());
  auto us = [](std::int64_t ns) { return static_cast<double>(ns) / 1e3; };
  std::printf("{\"bench\":\"timer_lateness\",\"impl\":\"%s\",\"variant\":\"%s\",\"n\":%llu,\"ns_per_op\":%.3f",
              bench::kImpl, variant.c_str(), static_cast<unsigned long long>(n), static_cast<double>(pct(late, 500)));
  std::printf(
      ",\"p50_us\":%.3f,\"p90_us\":%.3f,\"p99_us\":%.3f,\"max_us\":%.3f,\"mean_us\":%.3f,\"min_us\":%.3f,\"wall_ms\":%.3f}\n",
      us(pct(late, 500)), us(pct(late, 900)), us(pct(late, 990)), us(late.back()), mean / 1e3, us(late.front()),
      wall * 1e3);
}
