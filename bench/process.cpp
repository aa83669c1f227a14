// process [N]: N times, spawn /bin/true and wait for it (Command::status),
// one after the other on a current-thread runtime.
#include <pollux/pollux.hpp>
#include <pollux/process.hpp>

#include "common.hpp"
#include "repeat.hpp"

using namespace pollux;

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::uint64_t n = args.num(0, 2000);
  auto rt = Runtime::current_thread();
  std::uint64_t failed = 0;
  auto run = [&](std::uint64_t count) {
    rt.block_on(bench::Repeat(count, [&](std::uint64_t) {
      return process::Command("/bin/true").status() | map([&](process::ExitStatus status) {
               failed += status.success() ? 0 : 1;
               return Unit{};
             });
    }));
  };
  run(n / 10);
  auto t0 = bench::Clock::now();
  run(n);
  double seconds = bench::secs_since(t0);
  if (failed != 0) bench::die("a child failed");
  bench::emit("process", "spawn_wait_true", n, seconds);
}
