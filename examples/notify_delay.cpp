// The tutorial's `delay` built on Notify ("Async in depth", the Notify
// utility): a timer thread sleeps until the deadline and calls
// notify_one(); the future awaits notified(). Because notify_one stores a
// permit when nobody waits yet, a timer that fires before the first poll
// is not lost.
#include <pollux/pollux.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// delay(duration): on its first poll, starts the timer thread and waits on
// the Notify. Destroying it stops and joins the thread (jthread), so no
// thread outlives it and no notification arrives after it is gone.
class NotifyDelay {
 public:
  using Output = void;
  explicit NotifyDelay(Clock::duration duration)
      : when_(Clock::now() + duration), notify_(std::make_shared<pollux::Notify>()) {}
  NotifyDelay(NotifyDelay&&) noexcept = default;
  NotifyDelay& operator=(NotifyDelay&&) = delete;

  pollux::Poll<void> poll(pollux::Context& cx) {
    if (!notified_) {
      notified_.emplace(notify_->notified());
      timer_ = std::jthread([notify = notify_, when = when_](std::stop_token stop) {
        std::mutex mutex;
        std::condition_variable_any cv;
        std::unique_lock lock(mutex);
        cv.wait_until(lock, stop, when, [] { return false; });  // until the deadline or a stop
        if (!stop.stop_requested()) notify->notify_one();
      });
    }
    return notified_->poll(cx);
  }

 private:
  Clock::time_point when_;
  std::shared_ptr<pollux::Notify> notify_;
  std::optional<pollux::Notify::Notified> notified_;
  std::jthread timer_;  // declared last: stopped and joined first
};

long long ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

}  // namespace

int main() {
  auto start = Clock::now();
  pollux::block_on(NotifyDelay(100ms));
  long long first = ms_since(start);
  std::printf("delay(100ms) on a Notify returned after %lld ms\n", first);

  // A zero delay: the timer thread may call notify_one() before notified()
  // is polled; the stored permit completes it anyway.
  start = Clock::now();
  for (int i = 0; i < 100; ++i) pollux::block_on(NotifyDelay(0ms));
  long long zeros = ms_since(start);
  std::printf("100 delays of 0 ms returned after %lld ms in all: no notification was lost\n", zeros);

  // Two delays joined on one thread: both timers run at once.
  start = Clock::now();
  pollux::block_on(pollux::join(NotifyDelay(80ms), NotifyDelay(120ms)));
  long long joined = ms_since(start);
  std::printf("join(delay(80ms), delay(120ms)) returned after %lld ms\n", joined);

  // Cancelled before its deadline: the thread is stopped, nothing fires.
  {
    NotifyDelay cancelled(10s);
    pollux::Context cx(pollux::noop_waker());
    bool pending = cancelled.poll(cx).is_pending();
    std::printf("a 10 s delay polled once and dropped: pending %s, its timer thread stopped\n", pending ? "yes" : "no");
  }
  bool ok = first >= 100 && joined >= 120 && joined < 1000 && zeros < 5000;
  return ok ? 0 : 1;
}
