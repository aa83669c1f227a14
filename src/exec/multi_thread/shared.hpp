// The state a ThreadPool's workers share: their local queues, the inject
// queue, the idle protocol, the driver's lock and the registry of live
// tasks. One file per part, as in tokio's multi_thread/:
//   local_queue.hpp   a worker's ring, stealing half, overflowing half
//   inject_queue.hpp  wakes and spawns from outside the workers
//   idle.hpp          who sleeps, who searches, whom to wake
//   worker.cpp        the worker loop, scheduling, parking, the driver
//   ../thread_pool.cpp  the public API, the registry and shutdown
#pragma once

#include <array>
#include <cstdint>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

#include "../late_arrivals.hpp"
#include "../worker_counters.hpp"
#include "idle.hpp"
#include "inject_queue.hpp"
#include "local_queue.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/intrusive_list.hpp"
#include "pollux/exec/parker.hpp"
#include "pollux/exec/thread_pool.hpp"

namespace pollux {

namespace detail::multi_thread {

/// One worker thread's own state. Fields marked "owner" are touched only by
/// the worker's thread (and by shutdown, once that thread has ended).
struct Worker {
  LocalQueue queue;
  std::size_t index = 0;
  Arc<Parker> parker;  // made before the thread starts: notifiers use it from anywhere
  std::thread thread;
  TaskHeader* lifo = nullptr;      // owner: the task it woke last, run next; not stealable
  TaskHeader* current = nullptr;   // owner: the task it is polling
  std::uint64_t rng = 0;           // owner: picks the first victim to steal from
  std::uint32_t tick = 0;          // owner: tasks started, for kEventInterval
  bool searching = false;          // owner: counted as a searcher in Idle
  bool in_driver = false;          // owner: parked in or polling the driver, which wakes tasks in bursts
  std::uint32_t driver_wakes = 0;  // owner: tasks the driver woke onto our queue this time
  // Owner writes; metrics() reads. A snapshot takes these lines from the
  // owner for a moment: they are kept off the lines of the fields above.
  alignas(64) WorkerCounters counters;
};

using Registry = CountedIntrusiveList<TaskHeader, &TaskHeader::registry_hook>;

/// Live tasks, in shards by id so that spawns and completions on different
/// workers rarely meet on one lock.
struct RegistryShard {
  mutable Mutex mutex;
  Registry tasks POLLUX_GUARDED_BY(mutex);
  bool closed POLLUX_GUARDED_BY(mutex) = false;         // shutdown has begun: new tasks are cancelled at once
  std::uint64_t spawned POLLUX_GUARDED_BY(mutex) = 0;   // tasks registered here, ever (metrics)
  std::uint64_t finished POLLUX_GUARDED_BY(mutex) = 0;  // tasks that left, ever (metrics)
  // tasks() lists a shard a slice at a time, letting the lock go between
  // slices; this is the next task it will list, moved on by whoever takes
  // that task out. One listing at a time (Shared::listing_).
  mutable const TaskHeader* listing_next POLLUX_GUARDED_BY(mutex) = nullptr;

  // Under the lock, before `task` leaves the list.
  void leaving(const TaskHeader* task) const POLLUX_REQUIRES(mutex) {
    if (listing_next == task) listing_next = task->registry_hook.next;
  }
};

}  // namespace detail::multi_thread

class ThreadPool::Shared : public detail::Scheduler {
 public:
  using Worker = detail::multi_thread::Worker;
  using TaskHeader = detail::TaskHeader;
  using TaskList = detail::TaskList;

  /// The pool's state; a StampingScheduler of it if `options` ask for
  /// histograms, so that the wakes of a pool without them do not even test.
  static Arc<Shared> make(std::size_t threads, ThreadPoolOptions options);

  Shared(std::size_t threads, ThreadPoolOptions options);
  void start();
  void shutdown() noexcept;

  // detail::Scheduler. From one of our workers, a wake goes to its LIFO
  // slot (a self-wake to the back of its queue); from anywhere else, to the
  // inject queue.
  void schedule(Runnable runnable) override;
  void bind(Runnable runnable) override;

  /// The worker of this pool running on the calling thread, if any.
  Worker* current_worker() const noexcept;

  std::size_t live_tasks() const;
  std::vector<TaskInfo> tasks() const;
  ExecutorMetrics metrics() const;
  std::size_t threads() const noexcept { return workers_.size(); }

 private:
  // worker.cpp: the loop and its steps.
  void run_worker(Worker& self);
  // Made twice, for a pool with histograms and one without, so that the
  // loop never tests for them per poll.
  template <bool kMeasured>
  void work(Worker& self);
  TaskHeader* next_task(Worker& self);
  TaskHeader* steal_work(Worker& self);
  TaskHeader* pop_inject(Worker& self);
  template <bool kMeasured>
  void run_task(Worker& self, TaskHeader* task);
  template <bool kMeasured>
  void poll_task(Worker& self, TaskHeader* task);
  void park(Worker& self);
  void sleep(Worker& self);
  void poll_driver(Worker& self);
  void after_driver(Worker& self);
  void push_local(Worker& self, TaskHeader* task);
  void push_back_local(Worker& self, TaskHeader* task);
  void push_inject(TaskHeader* task);
  void notify_parked();
  void notify_if_work_pending(const Worker& self);

  // thread_pool.cpp: the registry.
  detail::multi_thread::RegistryShard& shard_of(const TaskHeader* task) noexcept {
    return shards_[task->id % shards_.size()];
  }
  void retire(TaskHeader* task, std::uint64_t refs);

  ThreadPoolOptions options_;
  std::vector<std::unique_ptr<Worker>> workers_;
  detail::multi_thread::InjectQueue inject_;
  detail::multi_thread::Idle idle_;
  detail::Atomic<bool> driver_held_{false};  // a worker sleeps in or polls the driver (a try-lock)
  detail::Atomic<bool> stopping_{false};
  // Runnables that reached the pool after its inject queue closed (wakes
  // from other threads during shutdown): the thread that shuts the pool
  // down takes them and destroys their futures (shutdown step 8).
  detail::LateArrivals late_;  // what wakes push once inject_ is closed (shutdown step 8)
  std::array<detail::multi_thread::RegistryShard, 16> shards_;
  mutable detail::Mutex listing_;  // one tasks() at a time: it keeps a cursor in each shard
  std::latch started_;             // counts the workers ready to run tasks (start() waits for them)
  std::latch left_loop_;           // counts the workers out of their loops (shutdown step 2)
  std::int64_t started_ns_ = detail::metrics_now_ns();
};

}  // namespace pollux
