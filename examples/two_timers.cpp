// The demo of "Writing an Async Runtime in Rust": two tasks spawned on a
// runtime, each sleeping one second. They run concurrently, so the total is
// about 1 s. Each task is composed from combinators rather than written by
// hand: print, then sleep, then print.
#include <pollux/pollux.hpp>

#include <chrono>
#include <cstdio>

using namespace std::chrono_literals;

namespace {

auto timer(int n) {
  auto start = pollux::lazy([n] { std::printf("starting timer %d\n", n); });
  // The sleep is made when the task gets there, so its second starts then.
  auto slept = pollux::then(std::move(start), [] { return pollux::sleep(1s); });
  return pollux::map(std::move(slept), [n] { std::printf("timer %d is done\n", n); });
}

}  // namespace

int main() {
  auto rt = pollux::Runtime::current_thread();
  auto first = rt.spawn(timer(1));
  auto second = rt.spawn(timer(2));

  auto start = std::chrono::steady_clock::now();
  rt.block_on(pollux::join(std::move(first), std::move(second)));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();

  std::printf(
      "Runtime ran two timers for 1 second each, but total runtime was %lldms, meaning they ran "
      "'concurrently'\n",
      static_cast<long long>(ms));
  return ms >= 1000 && ms < 1500 ? 0 : 1;
}
