// timeout and select with timers: a slow future loses to its timeout, a
// fast one beats it, and a select races a timer against a message from
// another thread. Runs on a multi-thread runtime, so the timers fire on
// whichever worker sleeps in the driver.
#include <pollux/pollux.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

using namespace std::chrono_literals;

namespace {

// A "query" that takes `took` to answer.
auto query(const char* name, std::chrono::milliseconds took) {
  return pollux::then(pollux::lazy([] {}), [name, took] {
    return pollux::map(pollux::sleep(took), [name] { return std::string(name) + " answered"; });
  });
}

void report(const char* what, const pollux::Result<std::string, pollux::Elapsed>& answer) {
  std::printf("%-40s -> %s\n", what, answer ? answer.value().c_str() : "timed out");
}

}  // namespace

int main() {
  auto rt = pollux::Runtime::multi_thread(2);
  int failures = 0;

  auto slow = rt.block_on(pollux::timeout(100ms, query("slow query", 2s)));
  report("slow query (2 s) with a 100 ms timeout", slow);
  failures += slow.has_value();

  auto fast = rt.block_on(pollux::timeout(1s, query("fast query", 10ms)));
  report("fast query (10 ms) with a 1 s timeout", fast);
  failures += !fast.has_value();

  // A message from another thread, raced against a 1 s timer.
  auto [tx, rx] = pollux::oneshot::channel<std::string>();
  std::thread sender([tx = std::move(tx)]() mutable {
    std::this_thread::sleep_for(50ms);
    (void)tx.send("a message from another thread");
  });
  auto start = std::chrono::steady_clock::now();
  auto winner = rt.block_on(pollux::select(pollux::sleep(1s), std::move(rx)));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  sender.join();
  if (winner.index() == 1) {
    std::printf("select(sleep 1 s, oneshot)               -> the oneshot won after %lld ms: %s\n",
                static_cast<long long>(ms), std::get<1>(winner).value_or("(sender dropped)").c_str());
  } else {
    std::printf("select(sleep 1 s, oneshot)               -> the timer won\n");
    ++failures;
  }
  return failures == 0 ? 0 : 1;
}
