// ThreadPool's public face, its registry of live tasks, and shutdown. The
// scheduler itself lives in multi_thread/ (see shared.hpp for the map).
#include "pollux/exec/thread_pool.hpp"

#include <stdexcept>
#include <string>
#include <system_error>

#include "multi_thread/shared.hpp"
#include "pollux/core/detail/contract.hpp"

namespace pollux {

using detail::MutexLock;
using detail::TaskHeader;
using detail::TaskList;
using namespace detail::multi_thread;

namespace {
// Idle keeps the number of searchers in 16 bits.
constexpr std::size_t kMaxThreads = 0xffff;
}  // namespace

ThreadPool::Shared::Shared(std::size_t threads, ThreadPoolOptions options)
    : options_(std::move(options)),
      idle_(threads),
      started_(static_cast<std::ptrdiff_t>(threads)),
      left_loop_(static_cast<std::ptrdiff_t>(threads)) {
  unhandled_exception = options_.unhandled_exception;
  lost_wake = options_.lost_wake;
  workers_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) {
    auto worker = std::make_unique<Worker>();
    worker->index = i;
    worker->rng = 0x9E3779B97F4A7C15ull * (i + 1);
    worker->parker = make_arc<Parker>(options_.driver);
    workers_.push_back(std::move(worker));
  }
}

Arc<ThreadPool::Shared> ThreadPool::Shared::make(std::size_t threads, ThreadPoolOptions options) {
  if (detail::kMetrics && options.histograms)
    return make_arc<detail::StampingScheduler<Shared>>(threads, std::move(options));
  return make_arc<Shared>(threads, std::move(options));
}

void ThreadPool::Shared::start() {
  std::size_t started = 0;
  try {
    for (auto& worker : workers_) {
      Worker* w = worker.get();
      w->thread = std::thread([this, w] { run_worker(*w); });
      ++started;
    }
  } catch (...) {
    // The workers that never ran count as out of their loops, or the ones
    // that did would wait for them at shutdown.
    left_loop_.count_down(static_cast<std::ptrdiff_t>(workers_.size() - started));
    throw;
  }
  // Every worker has its thread park (a ring, its fds) once the pool is
  // made: what a program counts after it stays put.
  started_.wait();
}

void ThreadPool::Shared::bind(Runnable runnable) {
  TaskHeader* task = runnable.header();
  RegistryShard& shard = shard_of(task);
  {
    MutexLock lock(shard.mutex);
    if (shard.closed) {
      // The pool is going: cancel the task at once (dropping the Runnable
      // destroys its future) and drop the reference meant for the registry.
      { Runnable cancelled = std::move(runnable); }
      detail::task_unregister(task, 1);
      return;
    }
    shard.tasks.push_back(*task);
    ++shard.spawned;
  }
  schedule(std::move(runnable));
}

// A finished task leaves the registry; `refs`: the registry's reference
// and the Runnable's, which run_retaining handed over.
void ThreadPool::Shared::retire(TaskHeader* task, std::uint64_t refs) {
  RegistryShard& shard = shard_of(task);
  {
    MutexLock lock(shard.mutex);
    shard.leaving(task);
    shard.tasks.erase(*task);
    ++shard.finished;
  }
  detail::task_unregister(task, refs);
}

// The numbered protocol is at the top of multi_thread/worker.cpp.
void ThreadPool::Shared::shutdown() noexcept {
  // 1.
  stopping_.store(true, std::memory_order_release);
  for (auto& worker : workers_) worker->parker->unpark();
  // 2, 3.
  for (auto& worker : workers_) {
    if (worker->thread.joinable()) worker->thread.join();
  }
  // 4.
  TaskList queued = inject_.close();
  // 5.
  for (RegistryShard& shard : shards_) {
    MutexLock lock(shard.mutex);
    shard.closed = true;
  }
  // 6.
  std::size_t awaited = 0;
  for (RegistryShard& shard : shards_) {
    for (;;) {
      TaskHeader* task;
      {
        MutexLock lock(shard.mutex);
        if (shard.tasks.empty()) break;
        task = &shard.tasks.front();
        shard.leaving(task);
        shard.tasks.pop_front();
        ++shard.finished;
      }
      if (detail::task_shutdown(task)) ++awaited;
      detail::task_unregister(task, 1);
    }
  }
  // 7. The tasks are closed now: dropping a Runnable destroys its future.
  std::size_t dropped = 0;
  for (auto& worker : workers_) {
    if (worker->lifo != nullptr) {
      (void)Runnable::adopt(std::exchange(worker->lifo, nullptr));
      ++dropped;
    }
    for (; TaskHeader* task = worker->queue.pop(); ++dropped) (void)Runnable::adopt(task);
  }
  for (; TaskHeader* task = queued.pop_front(); ++dropped) (void)Runnable::adopt(task);
  // 8.
  late_.drop_until(dropped, awaited);
}

std::size_t ThreadPool::Shared::live_tasks() const {
  std::size_t n = 0;
  for (const RegistryShard& shard : shards_) {
    MutexLock lock(shard.mutex);
    n += shard.tasks.size();
  }
  return n;
}

std::vector<TaskInfo> ThreadPool::Shared::tasks() const {
  // 256 tasks at a time under a shard's lock, so that a listing of a
  // million tasks never holds up a spawn or a task's end for longer than
  // one slice.
  constexpr std::size_t kSlice = 256;
  MutexLock one(listing_);
  std::vector<TaskInfo> out;
  std::int64_t now = detail::coarse_now_ns();
  for (const RegistryShard& shard : shards_) {
    {
      MutexLock lock(shard.mutex);
      shard.listing_next = shard.tasks.empty() ? nullptr : &shard.tasks.front();
    }
    for (bool more = true; more;) {
      MutexLock lock(shard.mutex);
      for (std::size_t i = 0; i < kSlice && shard.listing_next != nullptr; ++i) {
        out.push_back(detail::task_info(const_cast<TaskHeader*>(shard.listing_next), now));
        shard.listing_next = shard.listing_next->registry_hook.next;
      }
      more = shard.listing_next != nullptr;
    }
  }
  return out;
}

ExecutorMetrics ThreadPool::Shared::metrics() const {
  ExecutorMetrics out;
  out.counted = detail::kMetrics;
  out.workers = workers_.size();
  std::int64_t now = detail::metrics_now_ns();
  out.uptime = std::chrono::nanoseconds(now - started_ns_);
  for (const RegistryShard& shard : shards_) {
    MutexLock lock(shard.mutex);
    out.live_tasks += shard.tasks.size();
    out.spawned_tasks += shard.spawned;
    out.finished_tasks += shard.finished;
  }
  out.inject_queue_depth = inject_.approximate_len();
  out.histograms = detail::kMetrics && options_.histograms;
  out.worker.reserve(workers_.size());
  for (const auto& worker : workers_) {
    out.worker.push_back(worker->counters.snapshot(now, started_ns_, worker->queue.approximate_len()));
    if (out.histograms) {
      out.poll_duration += worker->counters.poll_duration.snapshot();
      out.schedule_latency += worker->counters.schedule_latency.snapshot();
    }
  }
  return out;
}

ThreadPool::ThreadPool(std::size_t threads, ThreadPoolOptions options) {
  if (threads == 0) throw std::invalid_argument("pollux::ThreadPool: needs at least one thread, got 0");
  if (threads > kMaxThreads) {
    throw std::invalid_argument("pollux::ThreadPool: at most " + std::to_string(kMaxThreads) + " threads, got "
                                + std::to_string(threads));
  }
  shared_ = Shared::make(threads, std::move(options));
  try {
    shared_->start();
  } catch (const std::system_error& error) {
    // Out of threads (or memory for their stacks): stop and join the
    // workers that did start, so nothing is left running or joinable.
    shared_->shutdown();
    throw std::system_error(error.code(),
                            "pollux::ThreadPool: cannot start " + std::to_string(threads) + " worker threads");
  }
}

ThreadPool::~ThreadPool() {
  // A worker cannot join itself, and the others would wait for it: a hang,
  // or std::system_error out of a destructor. Say what happened instead.
  if (shared_->current_worker() != nullptr) {
    detail::contract_violation_text(
        "pollux::ThreadPool (or the multi-thread Runtime that owns it) destroyed by one of its own tasks, on a "
        "worker that it would have to join; destroy it on the thread that made it, after block_on returns "
        "(cancel a token the main thread waits on, say)");
  }
  shared_->shutdown();
}

detail::Scheduler& ThreadPool::scheduler() const noexcept { return *shared_; }

void ThreadPool::check_not_worker(const char* what) const {
  if (shared_->current_worker() != nullptr) {
    throw std::logic_error(std::string("pollux::ThreadPool::") + what +
                           ": called on one of the pool's own workers, which it would block; inside a task, "
                           "await the JoinHandle (or spawn the work) instead");
  }
}

std::size_t ThreadPool::threads() const noexcept { return shared_->threads(); }
std::size_t ThreadPool::live_tasks() const { return shared_->live_tasks(); }
std::vector<TaskInfo> ThreadPool::tasks() const { return shared_->tasks(); }
ExecutorMetrics ThreadPool::metrics() const { return shared_->metrics(); }

}  // namespace pollux
