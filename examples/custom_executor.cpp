// A complete executor in about fifty lines, written as a user would write
// one: a queue of Runnables, a mutex and a condition variable. It is built
// on pollux::make_task, the same building block as LocalExecutor and
// ThreadPool, and it drives tasks that use join, select and oneshot
// channels, with a wake from another thread.
#include <pollux/pollux.hpp>

#include <chrono>
#include <condition_variable>
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
    auto [runnable, handle] = pollux::make_task(std::move(future), [this](pollux::Runnable r) { schedule(std::move(r)); });
    schedule(std::move(runnable));
    return std::move(handle);
  }

  // Runs tasks until `done` says stop; sleeps while the queue is empty.
  template <class Done>
  void run_until(Done done) {
    std::unique_lock lock(mutex_);
    while (!done()) {
      if (queue_.empty()) {
        woken_.wait(lock);
        continue;
      }
      pollux::Runnable next = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      next.run();  // polls the task once
      lock.lock();
    }
  }

 private:
  void schedule(pollux::Runnable runnable) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(runnable));
    }
    woken_.notify_one();
  }

  std::mutex mutex_;
  std::condition_variable woken_;
  std::deque<pollux::Runnable> queue_;  // dropping a Runnable cancels its task
};

}  // namespace

int main() {
  QueueExecutor executor;

  // A task that waits for a value from another thread, raced against one
  // that never finishes, and joined with one that is ready at once.
  auto [tx, rx] = pollux::oneshot<std::string>();
  auto raced = pollux::select(std::move(rx), pollux::pending_future<std::string>());
  auto both = pollux::join(std::move(raced), pollux::ready_future(42));
  auto handle = executor.spawn(pollux::map(std::move(both), [](auto results) {
    auto& [winner, answer] = results;
    return std::get<0>(winner).value_or("nothing") + " and " + std::to_string(answer);
  }));

  std::thread sender([tx = std::move(tx)]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    tx.send("a message from another thread");
  });
  executor.run_until([&] { return handle.is_finished(); });
  sender.join();

  std::string result = pollux::block_on(std::move(handle));
  std::printf("custom executor finished its task: %s\n", result.c_str());
  return result == "a message from another thread and 42" ? 0 : 1;
}
