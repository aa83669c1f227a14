// The program of "Async Rust, Part Two: Tasks": an async_main future spawns
// ten foo(n) tasks and awaits their JoinHandles; the program ends when
// async_main is done. foo(n) prints "start n", waits one second (a
// thread-backed Delay: the timer wheel comes with the runtime) and prints
// "end n", returning n.
#include <pollux/pollux.hpp>

#include <chrono>
#include <cstdio>
#include <optional>
#include <vector>

#include "delay.hpp"

using namespace std::chrono_literals;

namespace {

class Foo {
 public:
  using Output = int;
  explicit Foo(int n) : n_(n) {}

  pollux::Poll<int> poll(pollux::Context& cx) {
    if (!delay_) {
      std::printf("start %d\n", n_);
      delay_.emplace(1s);
    }
    POLLUX_TRY_READY(delay_->poll(cx));
    std::printf("end %d\n", n_);
    return pollux::ready(n_);
  }

 private:
  int n_;
  std::optional<example::Delay> delay_;  // empty: not started yet
};

// async_main: spawn ten tasks, then await all their handles.
class AsyncMain {
 public:
  using Output = int;

  pollux::Poll<int> poll(pollux::Context& cx) {
    if (!joined_) {
      std::vector<pollux::JoinHandle<int>> handles;
      for (int n = 1; n <= 10; ++n) handles.push_back(pollux::spawn(Foo(n), "foo"));
      joined_.emplace(pollux::join_all(std::move(handles)));
    }
    POLLUX_TRY_READY_ASSIGN(auto outputs, joined_->poll(cx));
    int sum = 0;
    for (auto& n : outputs) sum += n.value();  // value() throws, had one been cancelled
    return pollux::ready(sum);
  }

 private:
  std::optional<pollux::JoinAll<pollux::JoinHandle<int>>> joined_;
};

}  // namespace

int main() {
  auto start = std::chrono::steady_clock::now();
  pollux::LocalExecutor executor;
  int sum = executor.block_on(AsyncMain{});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("async_main joined ten tasks (sum of their outputs: %d) in %.3f s\n", sum, seconds);
  return sum == 55 && seconds < 2.0 ? 0 : 1;
}
