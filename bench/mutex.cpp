// mutex [uncontended|contended|contended_mt] [N=1e7]
// A Mutex<u64>. uncontended: one task locks, increments and unlocks N
// times. contended: 8 tasks each lock N/8 times; on its 16th, 32nd, ...
// lock (j % 16 == 15) a task yields once (wakes itself, Pending) while
// holding the lock, so the others queue and every later lock is a
// hand-off. contended_mt: the same on two workers. ns per lock; the
// counter must end at 8 * (N/8).
#include <memory>

#include "tasks.hpp"

using namespace pollux;

namespace {

auto locker(std::shared_ptr<Mutex<std::uint64_t>> mutex, std::uint64_t per, bool yields) {
  return poll_fn<std::uint64_t>(
      [mutex, per, yields, j = std::uint64_t{0}, lock = std::optional<Mutex<std::uint64_t>::Lock>(),
       held = std::optional<MutexGuard<std::uint64_t>>()](Context& cx) mutable -> Poll<std::uint64_t> {
        for (;;) {
          if (held) {  // back from the yield while holding the lock
            held.reset();
            ++j;
          }
          if (!lock) {
            if (j == per) return ready(j);
            lock.emplace(mutex->lock());
          }
          auto guard = lock->poll(cx);
          if (guard.is_pending()) return pending;
          lock.reset();
          ++*guard.value();
          if (yields && j % 16 == 15) {
            held.emplace(std::move(guard).value());
            cx.waker().wake_by_ref();  // yield_raw
            return pending;
          }
          ++j;
        }
      });
}

std::shared_ptr<Mutex<std::uint64_t>> last_mutex;  // checked after the run

auto run(std::uint64_t tasks, std::uint64_t n) {
  return bench::spawn_and_join<std::uint64_t>([=] {
    auto mutex = last_mutex = std::make_shared<Mutex<std::uint64_t>>(0);
    std::vector<JoinHandle<std::uint64_t>> handles;
    for (std::uint64_t t = 0; t < tasks; ++t) handles.push_back(spawn(locker(mutex, n / tasks, tasks > 1)));
    return handles;
  });
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "uncontended");
  std::uint64_t n = args.num(1, 10'000'000);
  if (variant != "uncontended" && variant != "contended" && variant != "contended_mt") {
    bench::die("unknown variant '" + variant + "' (uncontended|contended|contended_mt)");
  }
  std::uint64_t tasks = variant == "uncontended" ? 1 : 8;
  Runtime rt = bench::runtime_for(variant);
  auto result = bench::timed(
      rt, n, [&](std::uint64_t m) { return run(tasks, m); },
      [tasks](std::vector<std::uint64_t> counts, std::uint64_t m) {
        std::uint64_t locks = 0;
        for (auto c : counts) locks += c;
        if (locks != (m / tasks) * tasks || *last_mutex->try_lock().value() != locks) bench::die("wrong count");
      });
  bench::emit("mutex", variant, (n / tasks) * tasks, result.seconds,
              {{"tasks", double(tasks)}, {"allocations", double(result.allocations)}});
}
