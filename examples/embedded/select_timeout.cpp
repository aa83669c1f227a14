// select and timeout on one core: a timeout that expires before its
// future, one that does not, and a select between two sleeps whose
// shorter one wins; the loser is destroyed, which takes its sleep out of
// the timer's queue. Prints each result and exits 0 when all three are right.
#include <chrono>
#include <optional>
#include <utility>
#include <variant>

#include <pollux/embedded/executor.hpp>
#include <pollux/embedded/timeout.hpp>
#include <pollux/future/select.hpp>

#include "board.hpp"

using namespace std::chrono_literals;

namespace {

constinit pollux::TickTimer timer(1000);
int failures = 0;

void expect(bool ok, const char* what) {
  pollux::board::write(ok ? "ok   " : "FAIL ");
  pollux::board::write(what);
  pollux::board::write("\n");
  if (!ok) ++failures;
}

// The three checks, one after the other; each stage's future is made when
// the stage starts, so its time counts from there.
class Checks {
 public:
  using Output = void;

  pollux::Poll<void> poll(pollux::Context& cx) {
    switch (state_) {
      case State::ShortTimeout: {
        if (!timeout_) timeout_.emplace(pollux::timeout(10ms, pollux::sleep(50ms)));
        auto result = timeout_->poll(cx);
        if (result.is_pending()) return pollux::pending;
        expect(!result.value().has_value(), "timeout(10 ms, sleep(50 ms)) is Elapsed");
        timeout_.emplace(pollux::timeout(50ms, pollux::sleep(10ms)));
        state_ = State::LongTimeout;
        [[fallthrough]];
      }
      case State::LongTimeout: {
        auto result = timeout_->poll(cx);
        if (result.is_pending()) return pollux::pending;
        expect(result.value().has_value(), "timeout(50 ms, sleep(10 ms)) is the sleep's output");
        timeout_.reset();
        select_.emplace(pollux::select_biased(pollux::sleep(40ms), pollux::sleep(5ms)));
        state_ = State::Select;
        [[fallthrough]];
      }
      case State::Select: {
        auto winner = select_->poll(cx);
        if (winner.is_pending()) return pollux::pending;
        expect(winner.value().index() == 1, "select(sleep(40 ms), sleep(5 ms)) is won by the second");
        select_.reset();  // the loser's sleep leaves the timer's queue here
        state_ = State::Done;
        return pollux::ready();
      }
      case State::Done:
        break;
    }
    return pollux::ready();
  }

 private:
  enum class State { ShortTimeout, LongTimeout, Select, Done };
  using Select = decltype(pollux::select_biased(std::declval<pollux::TickSleep>(), std::declval<pollux::TickSleep>()));

  State state_ = State::ShortTimeout;
  std::optional<pollux::TickTimeout<pollux::TickSleep>> timeout_;
  std::optional<Select> select_;
};

}  // namespace

int main() {
  timer.start();
  mps2::start_systick(timer.hz());
  static constinit pollux::StaticTask<Checks> checks;
  pollux::SingleCoreExecutor executor;
  if (!executor.spawn(checks, Checks{})) return 2;
  executor.run();
  return failures == 0 ? 0 : 1;
}
