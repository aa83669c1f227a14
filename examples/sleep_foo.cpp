// The program of "Async Rust, Part One: Futures" with a real timer: ten
// foo(n) futures, each printing "start n", sleeping one second and printing
// "end n", joined with join_all on ONE thread (a current-thread Runtime).
// They sleep together, in one timer wheel, so the whole program takes about 1
// s, not 10.
#include <pollux/pollux.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

using namespace std::chrono_literals;

namespace {

// The article's Foo, hand-written: a state per await point. The Sleep is made
// on the first poll, so its second counts from when foo starts.
class Foo {
 public:
  using Output = void;
  explicit Foo(int n) : n_(n) {}

  pollux::Poll<void> poll(pollux::Context& cx) {
    switch (state_) {
      case State::Start:
        std::printf("start %d\n", n_);
        sleep_.start(pollux::sleep(1s));
        state_ = State::Sleeping;
        [[fallthrough]];
      case State::Sleeping:
        POLLUX_TRY_READY(sleep_.poll(cx));
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
  pollux::FutureSlot<pollux::Sleep> sleep_;
};

}  // namespace

int main() {
  auto rt = pollux::Runtime::current_thread();
  auto start = std::chrono::steady_clock::now();
  std::vector<Foo> futures;
  for (int n = 1; n <= 10; ++n) futures.emplace_back(n);
  rt.block_on(pollux::join_all(std::move(futures)));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("ten foo(n) slept 1 s each, on one thread, in %.3f s in all\n", seconds);
  return seconds >= 1.0 && seconds < 1.5 ? 0 : 1;
}
