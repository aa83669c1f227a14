// A complete executor in about fifty lines, written as a user would write
// one: a queue of Runnables, a mutex, and a pollux::Driver to sleep in when
// the queue is empty. It is built on pollux::make_task, the same building
// block as LocalExecutor and ThreadPool, and it drives tasks that use join,
// select, oneshot channels with a wake from another thread, and sleep: the
// Driver fires the timers while the executor sleeps in it.
#include <pollux/pollux.hpp>

#include <chrono>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace {

class QueueExecutor {
 public:
  template <pollux::Future F>
  pollux::JoinHandle<pollux::output_t<F>> spawn(F future) {
    // schedule() runs whenever a task is woken, from any thread.
    auto [runnable, handle] =
        pollux::make_task(std::move(future), [this](pollux::Runnable r) { schedule(std::move(r)); });
    schedule(std::move(runnable));
    return std::move(handle);
  }

  // Runs tasks until `done` says stop. With the queue empty it sleeps in
  // the driver, which returns when a timer is due (after waking its task)
  // or when schedule() unparks it.
  template <class Done>
  void run_until(Done done) {
    pollux::Driver::Guard guard = driver_.enter();  // sleep() finds the driver here
    while (!done()) {
      std::unique_lock lock(mutex_);
      if (queue_.empty()) {
        lock.unlock();
        driver_.park();
        continue;
      }
      pollux::Runnable next = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      next.run();  // polls the task once
    }
  }

 private:
  void schedule(pollux::Runnable runnable) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(runnable));
    }
    driver_.unpark();  // ends a park in progress, or makes the next one return at once
  }

  pollux::Driver driver_;
  std::mutex mutex_;
  std::deque<pollux::Runnable> queue_;  // dropping a Runnable cancels its task
};

}  // namespace

int main() {
  QueueExecutor executor;

  // A task that waits for a value from another thread, raced against one
  // that never finishes, and joined with one that is ready at once.
  auto [tx, rx] = pollux::oneshot::channel<std::string>();
  auto raced = pollux::select(std::move(rx), pollux::pending_future<std::string>());
  auto both = pollux::join(std::move(raced), pollux::ready_future(42));
  auto handle = executor.spawn(pollux::map(std::move(both), [](auto results) {
    auto& [winner, answer] = results;
    return std::get<0>(winner).value_or("nothing") + " and " + std::to_string(answer);
  }));

  std::thread sender([tx = std::move(tx)]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    (void)tx.send("a message from another thread");
  });
  executor.run_until([&] { return handle.is_finished(); });
  sender.join();

  std::string result = pollux::block_on(std::move(handle)).value();
  std::printf("custom executor finished its task: %s\n", result.c_str());

  // Timers: three tasks sleep 300 ms each, concurrently.
  auto start = std::chrono::steady_clock::now();
  auto nap = [](int n) {
    return pollux::then(pollux::lazy([] {}),
                        [n] { return pollux::map(pollux::sleep(std::chrono::milliseconds(300)), [n] { return n; }); });
  };
  auto naps = executor.spawn(pollux::join(nap(1), nap(2), nap(3)));
  executor.run_until([&] { return naps.is_finished(); });
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  std::printf("custom executor ran three 300 ms sleeps in %lld ms\n", static_cast<long long>(ms));
  return result == "a message from another thread and 42" && ms >= 300 && ms < 800 ? 0 : 1;
}
