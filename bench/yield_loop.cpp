// yield_loop [wake_by_ref|yield_now] [N=10000000]
// One spawned task on a LocalExecutor yields N times; ns per yield.
// wake_by_ref: self-wake + Pending (raw wake + requeue + poll);
// yield_now: pollux::yield_now(), which is that same path.
#include <pollux/pollux.hpp>

#include "common.hpp"

using namespace pollux;

namespace {

class YieldLoop {
 public:
  using Output = std::uint64_t;
  YieldLoop(std::uint64_t n, bool raw) : n_(n), raw_(raw) {}

  Poll<std::uint64_t> poll(Context& cx) {
    for (;;) {
      if (raw_) {
        if (count_ == n_) return ready(count_);
        ++count_;
        cx.waker().wake_by_ref();
        return pending;
      }
      if (yield_.poll(cx).is_pending()) return pending;
      if (++count_ == n_) return ready(count_);
      yield_ = YieldNow{};
    }
  }

 private:
  std::uint64_t n_, count_ = 0;
  bool raw_;
  YieldNow yield_;
};

std::uint64_t run(LocalExecutor& ex, std::uint64_t n, bool raw) {
  return ex.block_on(ex.spawn(YieldLoop(n, raw))).value();
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "wake_by_ref");
  std::uint64_t n = args.num(1, 10'000'000);
  if (variant != "wake_by_ref" && variant != "yield_now") {
    bench::die("unknown variant '" + variant + "' (wake_by_ref, yield_now)");
  }
  bool raw = variant == "wake_by_ref";
  LocalExecutor ex;
  run(ex, n / 10, raw);
  auto t0 = bench::Clock::now();
  std::uint64_t count = run(ex, n, raw);
  double seconds = bench::secs_since(t0);
  if (count != n) bench::die("wrong count");
  bench::emit("yield_loop", variant, n, seconds);
}
