// CPU-bound tasks spread over the workers of a ThreadPool, their results
// gathered with a JoinSet as they finish: counting the primes below 4
// million in 64 slices.
#include <pollux/pollux.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>

namespace {

bool is_prime(std::uint64_t n) {
  if (n < 2) return false;
  for (std::uint64_t d = 2; d * d <= n; ++d) {
    if (n % d == 0) return false;
  }
  return true;
}

struct Slice {
  std::uint64_t primes;
  std::thread::id worker;
};

}  // namespace

int main() {
  constexpr std::uint64_t limit = 4'000'000;
  constexpr std::uint64_t slices = 64;
  const std::size_t workers = std::max(2u, std::thread::hardware_concurrency());
  pollux::ThreadPool pool(workers);

  auto start = std::chrono::steady_clock::now();
  pollux::JoinSet<Slice> set;
  for (std::uint64_t s = 0; s < slices; ++s) {
    set.insert(pool.spawn(pollux::lazy([s] {
      Slice slice{0, std::this_thread::get_id()};
      for (std::uint64_t n = s * limit / slices; n < (s + 1) * limit / slices; ++n) slice.primes += is_prime(n);
      return slice;
    })));
  }

  std::uint64_t total = 0;
  std::set<std::thread::id> used;
  pool.block_on(pollux::poll_fn<void>([&](pollux::Context& cx) -> pollux::Poll<void> {
    for (;;) {
      POLLUX_TRY_READY_ASSIGN(auto next, set.join_next().poll(cx));
      if (!next) return pollux::ready();   // every slice is in
      const Slice& slice = next->value();  // value() throws for a cancelled task
      total += slice.primes;
      used.insert(slice.worker);
    }
  }));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::printf("%llu primes below %llu, counted in %llu slices on %zu of %zu workers in %.3f s\n",
              static_cast<unsigned long long>(total), static_cast<unsigned long long>(limit),
              static_cast<unsigned long long>(slices), used.size(), workers, seconds);
  return total == 283146 ? 0 : 1;
}
