// Two tasks blink at different periods on one core with no heap: each
// sleeps on the SysTick-driven TickTimer, prints its state, and ends after
// a few blinks; the executor sleeps (WFI) in between and returns when both
// ended. Prints through semihosting; exits 0 when the blinks came in the
// order their periods imply.
#include <chrono>
#include <cstdint>
#include <optional>

#include <pollux/embedded/executor.hpp>
#include <pollux/embedded/sleep.hpp>

#include "board.hpp"

using namespace std::chrono_literals;

namespace {

constinit pollux::TickTimer timer(1000);  // SysTick at 1 kHz

char order[16];  // which task blinked, in order: 'F' or 'S'
int blinks = 0;

// One LED: `times` blinks, one per `period`.
class Blink {
 public:
  using Output = void;
  Blink(char name, std::chrono::milliseconds period, int times) : name_(name), period_(period), left_(times) {}

  pollux::Poll<void> poll(pollux::Context& cx) {
    for (;;) {
      if (!sleep_) {
        if (left_ == 0) return pollux::ready();
        sleep_.emplace(pollux::sleep(period_));
      }
      if (sleep_->poll(cx).is_pending()) return pollux::pending;
      sleep_.reset();
      --left_;
      on_ = !on_;
      order[blinks++] = name_;
      pollux::board::write(name_ == 'F' ? "fast " : "slow ");
      pollux::board::write(on_ ? "on  at tick " : "off at tick ");
      mps2::write_number(timer.now());
      pollux::board::write("\n");
    }
  }

 private:
  char name_;
  std::chrono::milliseconds period_;
  int left_;
  bool on_ = false;
  std::optional<pollux::TickSleep> sleep_;
};

constinit pollux::StaticTask<Blink> fast_task;
constinit pollux::StaticTask<Blink> slow_task;

}  // namespace

int main() {
  pollux::SingleCoreExecutor executor;
  timer.start();
  mps2::start_systick(timer.hz());
  // 20 ms and 35 ms: at 20, 40, 60, 80 and 100 ms (fast), 35 and 70 ms
  // (slow). Each period counts from the poll after the last blink, so a
  // blink may come a tick late; the order has 5 ticks of margin.
  if (!executor.spawn(fast_task, Blink('F', 20ms, 5)) || !executor.spawn(slow_task, Blink('S', 35ms, 2))) return 2;
  executor.run();
  const char expected[] = "FSFFSFF";
  for (int i = 0; i < 7; ++i) {
    if (blinks != 7 || order[i] != expected[i]) {
      pollux::board::write("blinky: the blinks came out of order\n");
      return 1;
    }
  }
  pollux::board::write("blinky: 7 blinks in order\n");
  return 0;
}
