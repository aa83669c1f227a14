// The program of "Async Rust, Part One: Futures": ten foo(n) futures, each
// printing "start n", waiting one second and printing "end n", joined with
// join_all on one thread. They wait together, so the whole program takes
// about 1 s, not 10.
#include <pollux/pollux.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

#include "delay.hpp"

using namespace std::chrono_literals;

namespace {
// The article's Foo: a state machine with a state per await point.
class Foo {
 public:
  using Output = void;
  explicit Foo(int n) : n_(n) {}

  pollux::Poll<void> poll(pollux::Context& cx) {
    switch (state_) {
      case State::Start:
        std::printf("start %d\n", n_);
        state_ = State::Sleeping;
        [[fallthrough]];
      case State::Sleeping:
        POLLUX_TRY_READY(delay_.poll(cx));
        std::printf("end %d\n", n_);
        state_ = State::Done;
        return pollux::ready();
      case State::Done:
        break;
    }
    pollux::polled_after_ready<Foo>();
  }

 private:
  enum class State { Start, Sleeping, Done };
  int n_;
  State state_ = State::Start;
  example::Delay delay_{1s};
};
}  // namespace

int main() {
  auto start = std::chrono::steady_clock::now();
  std::vector<Foo> futures;
  for (int n = 1; n <= 10; ++n) futures.emplace_back(n);
  pollux::block_on(pollux::join_all(std::move(futures)));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("ten foo(n) joined in %.3f s\n", seconds);
  return seconds < 2.0 ? 0 : 1;
}
