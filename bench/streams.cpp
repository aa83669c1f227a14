// streams [pipeline|buffer_unordered|buffered] [N=1e9 (buffer_unordered, buffered: 3e6)]
// pipeline: on block_on, iter(0..N) | map(black_box(x) * 3) | filter(even)
//   | fold(0, +) over u64; checked: 3m(m-1), m = (N+1)/2.
// buffer_unordered / buffered: in one spawned task on the current-thread
//   runtime, iter(0..N) | map(i -> a future that wakes itself and is
//   Pending once, then Ready(i)) | buffer_unordered(64) (buffered(64)) |
//   fold(0, +); checked: N(N-1)/2. Timed: the block_on call (pipeline), or
//   the whole fold inside the task. ns per input item; `allocations` made
//   while timed (buffer_unordered, buffered: none once the 64 slots exist).
#include <ranges>

#include "tasks.hpp"

using namespace pollux;

namespace {

using u64 = std::uint64_t;

// The whole pipeline in one function, so its loop can be read in the
// assembly (objdump -d bench_streams, look for run_pipeline). Aligned to a
// cache line, so that its eight-instruction loop sits the same way in
// every build, whatever the linker puts before it.
[[gnu::noinline, gnu::aligned(64)]] u64 run_pipeline(u64 n) {
  return block_on(iter(std::views::iota(u64{0}, n)) | map([](u64 x) { return bench::black_box(x) * 3; })
                  | filter([](u64 x) { return x % 2 == 0; }) | fold(u64{0}, [](u64 acc, u64 x) { return acc + x; }));
}

u64 pipeline_expected(u64 n) {
  u64 m = (n + 1) / 2;
  return m == 0 ? 0 : 3 * m * (m - 1);
}

// Pending once (it wakes its task first), then Ready(i): bench::yield_raw.
auto yield_then(u64 i) {
  return poll_fn<u64>([i, yielded = false](Context& cx) mutable -> Poll<u64> {
    if (yielded) return ready(i);
    yielded = true;
    cx.waker().wake_by_ref();
    return pending;
  });
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "pipeline");
  if (variant == "pipeline") {
    u64 n = args.num(1, 1e9);
    if (run_pipeline(n / 10) != pipeline_expected(n / 10)) bench::die("pipeline: wrong sum (warm-up)");
    u64 allocations0 = bench::allocations.load();
    auto t0 = bench::Clock::now();
    u64 sum = run_pipeline(n);
    double seconds = bench::secs_since(t0);
    u64 made = bench::allocations.load() - allocations0;
    if (sum != pipeline_expected(n)) bench::die("pipeline: wrong sum");
    bench::emit("streams", variant, n, seconds, {{"allocations", static_cast<double>(made)}});
    return 0;
  }
  if (variant != "buffer_unordered" && variant != "buffered") bench::die("unknown variant " + variant);
  bool unordered = variant == "buffer_unordered";
  u64 n = args.num(1, 3e6);
  auto rt = Runtime::current_thread();
  auto run = [unordered](u64 count) {
    return bench::spawn_and_join<u64>([unordered, count] {
      std::vector<JoinHandle<u64>> handles;
      auto items = iter(std::views::iota(u64{0}, count)) | map(yield_then);
      auto sum = [](u64 acc, u64 x) { return acc + x; };
      if (unordered) {
        handles.push_back(spawn(std::move(items) | buffer_unordered(64) | fold(u64{0}, sum)));
      } else {
        handles.push_back(spawn(std::move(items) | buffered(64) | fold(u64{0}, sum)));
      }
      return handles;
    });
  };
  auto timed = bench::timed(rt, n, run, [](const std::vector<u64>& out, u64 count) {
    if (out.at(0) != count * (count - 1) / 2) bench::die("buffered: wrong sum");
  });
  bench::emit("streams", variant, n, timed.seconds, {{"allocations", static_cast<double>(timed.allocations)}});
}
