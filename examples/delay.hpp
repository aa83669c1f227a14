// Delay: the hand-written timer future of tokio's "Async in depth",
// backed by one thread per Delay. It shows the three jobs of a leaf
// future's poll: answer Ready or Pending, store the waker of the most recent
// poll (rule 2, checked with will_wake), and cancel on destruction (rule 5).
// The library's own sleep uses a timer wheel instead of a thread.
#pragma once

#include <pollux/pollux.hpp>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace example {

class Delay {
 public:
  using Output = void;
  using Clock = std::chrono::steady_clock;

  explicit Delay(Clock::duration duration) : when_(Clock::now() + duration) {}

  Delay(Delay&&) noexcept = default;
  Delay& operator=(Delay&&) = delete;

  // Cancelling: tell the timer thread to stop waiting, and wait for it, so
  // no wake arrives after the Delay is gone and no thread outlives it.
  ~Delay() {
    if (!timer_.joinable()) return;
    {
      std::lock_guard lock(shared_->mutex);
      shared_->cancelled = true;
    }
    shared_->changed.notify_one();
    timer_.join();
  }

  pollux::Poll<void> poll(pollux::Context& cx) {
    if (Clock::now() >= when_) return pollux::ready();
    {
      // The Delay may have moved to another task since the last poll: wake
      // the waker of *this* poll when the time comes.
      std::lock_guard lock(shared_->mutex);
      if (!shared_->waker.will_wake(cx.waker())) shared_->waker = cx.waker();
    }
    if (!timer_.joinable()) {
      timer_ = std::thread([shared = shared_, when = when_] {
        std::unique_lock lock(shared->mutex);
        shared->changed.wait_until(lock, when, [&] { return shared->cancelled; });
        if (shared->cancelled) return;
        pollux::Waker waker = shared->waker;
        lock.unlock();
        std::move(waker).wake();
      });
    }
    return pollux::pending;
  }

 private:
  struct Shared {
    std::mutex mutex;
    std::condition_variable changed;
    pollux::Waker waker;
    bool cancelled = false;
  };

  Clock::time_point when_;
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  std::thread timer_;
};

}  // namespace example
