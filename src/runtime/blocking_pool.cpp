// BlockingPool's threads: started on demand, parked on a condition
// variable while idle (no busy waiting), gone after keep_alive idle.
#include "pollux/runtime/blocking_pool.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "pollux/core/detail/concurrency.hpp"

namespace pollux {

BlockingPool::BlockingPool(BlockingPoolOptions options) : options_(options) {
  if (options_.max_threads == 0) throw std::invalid_argument("pollux::BlockingPool: max_threads must be at least 1");
}

BlockingPool::~BlockingPool() {
  std::deque<Arc<detail::BlockingJob>> cancelled;
  std::vector<std::thread> threads;
  {
    detail::MutexLock lock(mutex_);
    shutdown_ = true;
    cancelled.swap(queue_);
    threads = std::move(workers_);
    for (std::thread& thread : exited_) threads.push_back(std::move(thread));
    exited_.clear();
  }
  work_.notify_all();
  for (auto& job : cancelled) job->cancel();
  for (std::thread& thread : threads) thread.join();  // the running jobs finish first
}

void BlockingPool::submit(Arc<detail::BlockingJob> job) {
  detail::UniqueLock lock(mutex_);
  if (shutdown_) {
    lock.unlock();
    job->cancel();
    return;
  }
  join_exited();
  queue_.push_back(std::move(job));
  ++submitted_;
  if (idle_ > notified_) {
    ++notified_;
    lock.unlock();
    work_.notify_one();
    return;
  }
  if (workers_.size() < options_.max_threads) {
    try {
      workers_.emplace_back([this] { run_worker(); });
    } catch (...) {
      // No new thread (EAGAIN: out of threads or memory). While one thread
      // lives, it takes the job from the queue when it is done with its
      // own: the call succeeds and the job runs once (tokio's rule). With
      // none, the job leaves the queue and the call fails: it never runs.
      if (!workers_.empty()) return;
      queue_.pop_back();
      --submitted_;
      throw;
    }
  }
  // Else every thread is busy: the first to finish takes it from the queue.
}

void BlockingPool::join_exited() {
  if (exited_.empty()) return;
  std::vector<std::thread> exited = std::move(exited_);
  exited_.clear();
  mutex_.unlock();                                   // the caller's lock is held again when we return
  for (std::thread& thread : exited) thread.join();  // they are past their last use of the pool
  mutex_.lock();
}

void BlockingPool::run_worker() {
  detail::runtime_context().blocking_pool = this;  // a blocking function may spawn_blocking too
  detail::UniqueLock lock(mutex_);
  for (;;) {
    while (!queue_.empty()) {
      Arc<detail::BlockingJob> job = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      job->run();
      job.reset();
      lock.lock();
    }
    if (shutdown_) break;
    ++idle_;
    bool woken = work_.wait_for(lock, options_.keep_alive,
                                [this]() POLLUX_REQUIRES(mutex_) { return notified_ > 0 || shutdown_; });
    --idle_;
    if (notified_ > 0) {
      --notified_;
      continue;
    }
    if (shutdown_ || !woken) break;  // shut down, or idle for keep_alive: leave
  }
  if (!shutdown_) {
    // Hand our own handle to whoever submits next (or the destructor), who
    // joins it; during shutdown the destructor already holds it.
    auto self = std::find_if(workers_.begin(), workers_.end(),
                             [](const std::thread& t) { return t.get_id() == std::this_thread::get_id(); });
    exited_.push_back(std::move(*self));
    workers_.erase(self);
  }
}

BlockingPoolMetrics BlockingPool::metrics() const {
  detail::MutexLock lock(mutex_);
  BlockingPoolMetrics out;
  out.threads = workers_.size();
  out.idle_threads = idle_ - std::min(notified_, idle_);  // the notified ones are about to take a job
  out.queue_depth = queue_.size();
  out.jobs_submitted = submitted_;
  return out;
}

std::size_t BlockingPool::threads() const {
  detail::MutexLock lock(mutex_);
  return workers_.size();
}

}  // namespace pollux
