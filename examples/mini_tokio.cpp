// The tutorial's MiniTokio ("Async in depth"), its second version: tasks
// are scheduled through a channel, and a task's waker (made with
// waker_from, the tutorial's ArcWake) sends the task back into the channel.
// The executor thread receives tasks with a blocking receive and polls
// them. The futures are the tutorial's Delay (examples/delay.hpp), each
// backed by a timer thread that wakes the task's waker.
#include <pollux/pollux.hpp>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "delay.hpp"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

class Task;
using Sender = pollux::mpsc::UnboundedSender<pollux::Arc<Task>>;

// A spawned future and the channel that schedules it. Waking it sends it
// back to the executor (the tutorial's `schedule`).
class Task : public pollux::RefCounted<Task> {
 public:
  Task(pollux::BoxFuture<void> future, Sender executor) : future_(std::move(future)), executor_(std::move(executor)) {}

  // Called by the waker, from any thread.
  void wake() { (void)executor_.send(pollux::Arc<Task>(this)); }

  // Polls the future with a waker for this task; a woken-again task that
  // has already finished (a spurious wake-up) is left alone. Returns
  // whether the future completed on this poll. A finished future is
  // destroyed at once: it may hold a waker of this very task (the Delay
  // does), and keeping it would keep the task alive forever.
  bool poll() {
    std::lock_guard lock(mutex_);  // as the tutorial: one poller at a time
    if (!future_) return false;
    pollux::Waker waker = pollux::waker_from(pollux::Arc<Task>(this));
    pollux::Context cx(waker);
    if (future_->poll(cx).is_pending()) return false;
    future_.reset();
    return true;
  }

 private:
  std::mutex mutex_;
  std::optional<pollux::BoxFuture<void>> future_;
  Sender executor_;
};

class MiniTokio {
 public:
  MiniTokio() : MiniTokio(pollux::mpsc::unbounded_channel<pollux::Arc<Task>>()) {}

  template <pollux::Future F>
  void spawn(F future) {
    ++live_;
    (void)sender_.send(pollux::make_arc<Task>(pollux::BoxFuture<void>(std::move(future)), sender_));
  }

  // Receives and polls scheduled tasks until every spawned task finished.
  void run() {
    while (live_ > 0) {
      std::optional<pollux::Arc<Task>> task = pollux::block_on(scheduled_.recv());
      if (task && (*task)->poll()) --live_;
    }
  }

 private:
  explicit MiniTokio(std::pair<Sender, pollux::mpsc::Receiver<pollux::Arc<Task>>> channel)
      : sender_(std::move(channel.first)), scheduled_(std::move(channel.second)) {}
  Sender sender_;
  pollux::mpsc::Receiver<pollux::Arc<Task>> scheduled_;
  std::size_t live_ = 0;
};

// A future that awaits a Delay and then records its name.
class Hello {
 public:
  using Output = void;
  Hello(std::string name, Clock::duration after, std::vector<std::string>& order, std::mutex& mutex)
      : name_(std::move(name)), delay_(after), order_(order), mutex_(mutex) {}
  pollux::Poll<void> poll(pollux::Context& cx) {
    POLLUX_TRY_READY(delay_.poll(cx));
    std::lock_guard lock(mutex_);
    order_.push_back(name_);
    std::printf("  %s: done\n", name_.c_str());
    return pollux::ready();
  }

 private:
  std::string name_;
  example::Delay delay_;
  std::vector<std::string>& order_;
  std::mutex& mutex_;
};

}  // namespace

int main() {
  std::vector<std::string> order;
  std::mutex mutex;
  auto start = Clock::now();
  {
    MiniTokio mini_tokio;
    mini_tokio.spawn(Hello("hello after 100 ms", 100ms, order, mutex));
    mini_tokio.spawn(Hello("hello after 50 ms", 50ms, order, mutex));
    mini_tokio.spawn(Hello("hello after 150 ms", 150ms, order, mutex));
    std::printf("MiniTokio: 3 tasks spawned; running\n");
    mini_tokio.run();
  }
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  std::printf("MiniTokio: every task finished after %lld ms, woken through the channel\n", static_cast<long long>(ms));
  bool ok = order == std::vector<std::string>{"hello after 50 ms", "hello after 100 ms", "hello after 150 ms"}
            && ms >= 150 && ms < 2000;
  return ok ? 0 : 1;
}
