// semaphore [uncontended|contended|contended_mt] [N=1e7]
// uncontended: Semaphore(1), one task acquires and drops a permit N times.
// contended: Semaphore(4), 16 tasks each N/16 times: acquire, yield once
// (wake itself, Pending) while holding the permit, drop it; so 4 hold
// permits and 12 wait. contended_mt: the same on two workers. ns per
// acquire; every permit must be back at the end.
#include <memory>

#include "tasks.hpp"

using namespace pollux;

namespace {

std::shared_ptr<Semaphore> last_semaphore;  // checked after the run

auto acquirer(std::shared_ptr<Semaphore> sem, std::uint64_t per, bool yields) {
  return poll_fn<std::uint64_t>([sem, per, yields, j = std::uint64_t{0}, acquire = std::optional<Semaphore::Acquire>(),
                                 held = std::optional<SemaphorePermit>()](Context& cx) mutable -> Poll<std::uint64_t> {
    for (;;) {
      if (held) {  // back from the yield while holding the permit
        held.reset();
        ++j;
      }
      if (!acquire) {
        if (j == per) return ready(j);
        acquire.emplace(sem->acquire());
      }
      auto permit = acquire->poll(cx);
      if (permit.is_pending()) return pending;
      acquire.reset();
      if (!permit.value()) bench::die("closed");
      if (yields) {
        held.emplace(std::move(permit.value().value()));
        cx.waker().wake_by_ref();  // yield_raw
        return pending;
      }
      ++j;
    }
  });
}

auto run(std::uint64_t tasks, std::size_t permits, std::uint64_t n) {
  return bench::spawn_and_join<std::uint64_t>([=] {
    auto sem = last_semaphore = std::make_shared<Semaphore>(permits);
    std::vector<JoinHandle<std::uint64_t>> handles;
    for (std::uint64_t t = 0; t < tasks; ++t) handles.push_back(spawn(acquirer(sem, n / tasks, tasks > 1)));
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
  std::uint64_t tasks = variant == "uncontended" ? 1 : 16;
  std::size_t permits = variant == "uncontended" ? 1 : 4;
  Runtime rt = bench::runtime_for(variant);
  auto result = bench::timed(
      rt, n, [&](std::uint64_t m) { return run(tasks, permits, m); },
      [&](std::vector<std::uint64_t> counts, std::uint64_t m) {
        std::uint64_t acquires = 0;
        for (auto c : counts) acquires += c;
        if (acquires != (m / tasks) * tasks || last_semaphore->available_permits() != permits) {
          bench::die("wrong count or permits lost");
        }
      });
  bench::emit("semaphore", variant, (n / tasks) * tasks, result.seconds,
              {{"tasks", double(tasks)}, {"permits", double(permits)}, {"allocations", double(result.allocations)}});
}
