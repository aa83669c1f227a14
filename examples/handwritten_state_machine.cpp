// A future with several states, written by hand as an explicit
// `enum class State` machine (what an `async fn` compiles to in Rust), then
// composed with join, select and map.
//
// MakeCoffee grinds (a Delay), then waits for a steamer thread to send its
// milk through a oneshot channel, then is Ready with a description.
#include <pollux/pollux.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "delay.hpp"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

class MakeCoffee {
 public:
  using Output = std::string;

  MakeCoffee(std::string name, Clock::duration grind, Clock::duration steam)
      : name_(std::move(name)), grinder_(grind), steam_(steam) {}
  MakeCoffee(MakeCoffee&&) noexcept = default;

  ~MakeCoffee() {
    if (state_ == State::Grinding) std::printf("  %s: cancelled while grinding\n", name_.c_str());
    if (steamer_.joinable()) steamer_.join();
  }

  pollux::Poll<std::string> poll(pollux::Context& cx) {
    switch (state_) {
      case State::Start:
        std::printf("  %s: grinding beans\n", name_.c_str());
        state_ = State::Grinding;
        [[fallthrough]];
      case State::Grinding: {
        POLLUX_TRY_READY(grinder_.poll(cx));
        std::printf("  %s: beans ground, steaming milk\n", name_.c_str());
        auto [tx, rx] = pollux::oneshot::channel<std::string>();
        milk_.emplace(std::move(rx));
        steamer_ = std::thread([tx = std::move(tx), steam = steam_]() mutable {
          std::this_thread::sleep_for(steam);
          (void)tx.send("steamed milk");
        });
        state_ = State::Steaming;
        [[fallthrough]];
      }
      case State::Steaming: {
        POLLUX_TRY_READY_ASSIGN(auto milk, milk_->poll(cx));
        state_ = State::Done;
        std::string milk_text = milk.value_or("no milk");
        return pollux::ready(name_ + " with " + milk_text);
      }
      case State::Done:
        break;
    }
    pollux::polled_after_ready<MakeCoffee>();
  }

 private:
  // Start: not polled yet (moves happen here, rule 4); one state per wait.
  enum class State { Start, Grinding, Steaming, Done };

  State state_ = State::Start;
  std::string name_;
  example::Delay grinder_;
  Clock::duration steam_;
  std::optional<pollux::oneshot::Receiver<std::string>> milk_;
  std::thread steamer_;
};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

int main() {
  auto start = Clock::now();
  std::printf("join: two coffees at once\n");
  auto both = pollux::join(MakeCoffee("latte", 100ms, 100ms), MakeCoffee("flat white", 150ms, 50ms))
              | pollux::map([](std::tuple<std::string, std::string> cups) {
                  return std::get<0>(cups) + " and " + std::get<1>(cups);
                });
  std::string served = pollux::block_on(std::move(both));
  double joined_s = seconds_since(start);
  std::printf("  served %s after %.0f ms (in parallel: about 200, not 400)\n", served.c_str(), joined_s * 1e3);

  std::printf("select: a slow coffee against a 100 ms deadline\n");
  start = Clock::now();
  auto race = pollux::select(MakeCoffee("slow pour-over", 1s, 1s), example::Delay(100ms));
  auto winner = pollux::block_on(std::move(race));
  double raced_s = seconds_since(start);
  std::printf("  winner: %s after %.0f ms\n", winner.index() == 0 ? "the coffee" : "the deadline", raced_s * 1e3);

  bool ok = served == "latte with steamed milk and flat white with steamed milk" && joined_s < 0.35
            && winner.index() == 1 && raced_s < 0.5;
  return ok ? 0 : 1;
}
