// ThreadPool's workers, queues, stealing, parking and shutdown.
#include "pollux/exec/thread_pool.hpp"

#include <boost/intrusive/list.hpp>
#include <boost/intrusive/slist.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "pollux/exec/parker.hpp"
#include "pollux/core/coop.hpp"

namespace pollux {

namespace bi = boost::intrusive;
using detail::TaskHeader;

namespace {

using RunQueue = bi::slist<TaskHeader, bi::member_hook<TaskHeader, detail::RunQueueHook, &TaskHeader::run_hook>,
                           bi::cache_last<true>, bi::constant_time_size<true>>;
using Registry = bi::list<TaskHeader, bi::member_hook<TaskHeader, detail::RegistryHook, &TaskHeader::registry_hook>,
                          bi::constant_time_size<true>>;

// A worker's run queue: a ring of task pointers. Only the owner pushes (at
// the tail); the owner and thieves take from the head with a CAS. A taker
// whose CAS succeeds read a slot the owner could not have reused: the
// owner writes slot `tail` only while tail - head < capacity.
class LocalQueue {
 public:
  static constexpr std::uint32_t kCapacity = 256;

  // Owner only. False when full.
  bool push(TaskHeader* task) noexcept {
    std::uint32_t tail = tail_.load(std::memory_order_relaxed);
    std::uint32_t head = head_.load(std::memory_order_acquire);
    if (tail - head >= kCapacity) return false;
    slots_[tail % kCapacity].store(task, std::memory_order_relaxed);
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }

  // Owner or thief.
  TaskHeader* pop() noexcept {
    std::uint32_t head = head_.load(std::memory_order_acquire);
    for (;;) {
      std::uint32_t tail = tail_.load(std::memory_order_acquire);
      if (head == tail) return nullptr;
      TaskHeader* task = slots_[head % kCapacity].load(std::memory_order_relaxed);
      if (head_.compare_exchange_weak(head, head + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        return task;
      }
    }
  }

  bool empty() const noexcept {
    return head_.load(std::memory_order_acquire) == tail_.load(std::memory_order_acquire);
  }

 private:
  alignas(64) std::atomic<std::uint32_t> head_{0};
  alignas(64) std::atomic<std::uint32_t> tail_{0};
  std::array<std::atomic<TaskHeader*>, kCapacity> slots_{};
};

struct Worker {
  LocalQueue queue;
  TaskHeader* lifo = nullptr;        // owner only: the task it woke last
  TaskHeader* current = nullptr;     // owner only: the task it is running
  Arc<Parker> parker;
  std::thread thread;
  std::uint64_t rng = 0;
  bool searching = false;            // woken to look for work (guarded by the pool's idle_mutex when parked)
  bool in_driver = false;            // owner only: parked in or polling the driver, which may wake many tasks
  std::uint32_t driver_wakes = 0;    // owner only: tasks the driver woke onto our queue this time
};

thread_local Worker* current_worker = nullptr;
thread_local const void* current_pool = nullptr;

}  // namespace

class ThreadPool::Shared final : public detail::Scheduler {
 public:
  Shared(std::size_t threads, ThreadPoolOptions opts) : options(std::move(opts)) {
    unhandled_exception = options.unhandled_exception;
    workers.reserve(threads);
    for (std::size_t i = 0; i < threads; ++i) {
      workers.push_back(std::make_unique<Worker>());
      workers.back()->rng = 0x9E3779B97F4A7C15ull * (i + 1);
      // Made here, not on the worker's thread: notifiers read it from anywhere.
      workers.back()->parker = make_arc<Parker>(options.driver);
    }
  }

  void start() {
    for (auto& worker : workers) {
      Worker* w = worker.get();
      w->thread = std::thread([this, w] { run_worker(*w); });
    }
  }

  // Wakes: from one of our workers, a self-wake goes to the back of its
  // queue and any other wake to its LIFO slot; from anywhere else, to the
  // inject queue.
  void schedule(Runnable runnable) override {
    TaskHeader* task = runnable.release();
    Worker* worker = current_pool == this ? current_worker : nullptr;
    if (worker == nullptr) {
      push_inject(task);
      return;
    }
    if (task == worker->current) {
      push_local(*worker, task);
      return;
    }
    if (worker->in_driver) {
      // The driver wakes tasks in bursts (an epoll_wait's worth of sockets):
      // queue them quietly and wake another worker once, after the burst
      // (see after_driver), not once per task.
      if (!worker->queue.push(task)) push_inject(task);
      ++worker->driver_wakes;
      return;
    }
    if (TaskHeader* displaced = std::exchange(worker->lifo, task)) push_local(*worker, displaced);
    notify_one();  // the LIFO slot is not stealable, but its displaced task or the worker's queue is
  }

  void bind(Runnable runnable) override {
    TaskHeader* task = runnable.header();
    Shard& shard = shard_of(task);
    {
      std::lock_guard lock(shard.mutex);
      if (shut_down) {
        // The pool is going: cancel the task at once (dropping the Runnable
        // destroys its future) and drop the reference meant for the registry.
        { Runnable cancelled = std::move(runnable); }
        detail::TaskSnapshot after;
        if (task->state.unregister(1, after)) detail::task_free(task, after);
        return;
      }
      shard.tasks.push_back(*task);
    }
    schedule(std::move(runnable));
  }

  void push_local(Worker& worker, TaskHeader* task) {
    if (!worker.queue.push(task)) {
      push_inject(task);  // full: the overflow goes to everyone
      return;
    }
    notify_one();
  }

  void push_inject(TaskHeader* task) {
    {
      std::lock_guard lock(inject_mutex);
      if (shut_down_inject) {
        (void)Runnable::adopt(task);  // the pool is gone: dropping it cancels the task
        return;
      }
      inject.push_back(*task);
      inject_size.store(inject.size(), std::memory_order_release);
    }
    notify_one();
  }

  // Takes one task from the inject queue, and moves up to half a ring's
  // worth more to the worker's own queue, so one lock serves many tasks.
  TaskHeader* pop_inject(Worker* into = nullptr) {
    if (inject_size.load(std::memory_order_acquire) == 0) return nullptr;
    std::lock_guard lock(inject_mutex);
    if (inject.empty()) return nullptr;
    TaskHeader* task = &inject.front();
    inject.pop_front();
    if (into != nullptr) {
      std::size_t batch = std::min<std::size_t>(inject.size() / workers.size(), LocalQueue::kCapacity / 2);
      while (batch-- > 0 && into->queue.push(&inject.front())) inject.pop_front();
    }
    inject_size.store(inject.size(), std::memory_order_release);
    return task;
  }

  // After making work visible: unpark one parked worker, unless one is
  // already searching for work (it will find this, and wake the next one if
  // it finds work: see found_work), so a burst of pushes costs one unpark,
  // not one per push. Both this and a parking worker's announcement are
  // read-modify-writes of `idle_state`: whichever comes second sees the
  // other, so either the worker's last look at the queues finds the work,
  // or we find the worker.
  void notify_one() {
    std::uint64_t state = idle_state.fetch_add(0, std::memory_order_acq_rel);
    if (idle_count(state) == 0 || searching_count(state) != 0) return;
    Worker* wake = nullptr;
    {
      std::lock_guard lock(idle_mutex);
      if (idle.empty()) return;
      wake = idle.back();
      idle.pop_back();
      wake->searching = true;
      // One fewer idle, one more searching.
      idle_state.fetch_add(kSearching - kIdle, std::memory_order_acq_rel);
    }
    wake->parker->unpark();
  }

  // A searching worker found a task: it stops searching, and if it was the
  // last searcher it wakes another worker, since there may be more work.
  void found_work(Worker& self) {
    if (!self.searching) return;
    self.searching = false;
    std::uint64_t before = idle_state.fetch_sub(kSearching, std::memory_order_acq_rel);
    if (searching_count(before) == 1) notify_one();
  }

  static constexpr std::uint64_t kIdle = 1;
  static constexpr std::uint64_t kSearching = std::uint64_t{1} << 32;
  static std::uint64_t idle_count(std::uint64_t state) noexcept { return state & 0xffffffffu; }
  static std::uint64_t searching_count(std::uint64_t state) noexcept { return state >> 32; }

  TaskHeader* steal(Worker& thief) {
    std::size_t n = workers.size();
    if (n < 2) return nullptr;
    thief.rng ^= thief.rng << 13;
    thief.rng ^= thief.rng >> 7;
    thief.rng ^= thief.rng << 17;
    std::size_t start = thief.rng % n;
    for (std::size_t k = 0; k < n; ++k) {
      Worker& victim = *workers[(start + k) % n];
      if (&victim == &thief) continue;
      if (TaskHeader* task = victim.queue.pop()) return task;
    }
    return nullptr;
  }

  bool any_work(const Worker& self) const {
    if (inject_size.load(std::memory_order_acquire) != 0 || self.lifo != nullptr) return true;
    for (auto& w : workers) {
      if (!w->queue.empty()) return true;
    }
    return false;
  }

  TaskHeader* next_task(Worker& self, std::uint32_t tick, int& lifo_run) {
    // Every 61 tasks the inject queue goes first, so remote wakes and
    // spawns are not starved by local work.
    if (tick % 61 == 0) {
      if (TaskHeader* task = pop_inject(&self)) return task;
    }
    if (self.lifo != nullptr && lifo_run < 3) {  // a few LIFO runs in a row, then the queue
      ++lifo_run;
      return std::exchange(self.lifo, nullptr);
    }
    lifo_run = 0;
    if (self.lifo != nullptr) push_local(self, std::exchange(self.lifo, nullptr));
    if (TaskHeader* task = self.queue.pop()) return task;
    if (TaskHeader* task = pop_inject(&self)) return task;
    return steal(self);
  }

  void run_task(Worker& self, TaskHeader* task) {
    found_work(self);
    self.current = task;
    bool finished;
    {
      coop::BudgetScope budget;
      finished = Runnable::adopt(task).run_retaining();
    }
    self.current = nullptr;
    if (finished) retire(task, 2);
  }

  // Announces the worker idle, looks everywhere once more, then parks.
  void park(Worker& self) {
    {
      std::lock_guard lock(idle_mutex);
      idle.push_back(&self);
      // Idle now, and no longer searching (if we were).
      std::uint64_t change = kIdle - (self.searching ? kSearching : 0);
      self.searching = false;
      idle_state.fetch_add(change, std::memory_order_acq_rel);
    }
    if (!any_work(self) && !stopping.load(std::memory_order_acquire)) {
      // One worker at a time sleeps in the driver; the others on their futex.
      if (options.driver && !driver_held.exchange(true, std::memory_order_acquire)) {
        self.in_driver = true;
        self.parker->park_in_driver();
        driver_held.store(false, std::memory_order_release);
        after_driver(self);
      } else {
        self.parker->park();
      }
    }
    // Whatever woke us (a notifier, which took us off the list and made us
    // a searcher; a token left by an earlier notifier; shutdown; or work we
    // saw before parking): if we are still on the list, leave it as a
    // searcher, so the counts always match the list.
    std::lock_guard lock(idle_mutex);
    auto it = std::find(idle.begin(), idle.end(), &self);
    if (it != idle.end()) {
      *it = idle.back();
      idle.pop_back();
      self.searching = true;
      idle_state.fetch_add(kSearching - kIdle, std::memory_order_acq_rel);
    }
  }

  // A busy worker lets the driver fire due timers now and then, unless
  // another worker is already sleeping in it (and so fires them itself).
  void poll_driver(Worker& self) {
    if (!options.driver || driver_held.load(std::memory_order_relaxed)) return;
    if (driver_held.exchange(true, std::memory_order_acquire)) return;
    self.in_driver = true;
    options.driver->poll();
    driver_held.store(false, std::memory_order_release);
    after_driver(self);
  }

  // One more task than this worker runs next is worth a helper.
  void after_driver(Worker& self) {
    self.in_driver = false;
    if (std::exchange(self.driver_wakes, 0) > 1) notify_one();
  }

  void run_worker(Worker& self) {
    if (options.on_thread_start) options.on_thread_start();
    current_worker = &self;
    current_pool = this;
    {
      detail::CurrentSchedulerScope scheduler(this);
      std::uint32_t tick = 0;
      int lifo_run = 0;
      while (!stopping.load(std::memory_order_acquire)) {
        if (TaskHeader* task = next_task(self, ++tick, lifo_run)) {
          run_task(self, task);
          if (tick % 61 == 0) poll_driver(self);
        } else {
          park(self);
        }
      }
    }
    current_worker = nullptr;
    current_pool = nullptr;
    if (options.on_thread_stop) options.on_thread_stop();
  }

  struct Shard {
    std::mutex mutex;
    Registry tasks;
  };
  static constexpr std::size_t kShards = 16;

  Shard& shard_of(TaskHeader* task) noexcept { return shards[task->id % kShards]; }

  void retire(TaskHeader* task, std::uint64_t refs) {
    Shard& shard = shard_of(task);
    {
      std::lock_guard lock(shard.mutex);
      shard.tasks.erase(shard.tasks.iterator_to(*task));
    }
    detail::TaskSnapshot after;
    if (task->state.unregister(refs, after)) detail::task_free(task, after);
  }

  // Stops the workers, then cancels what is left, as LocalExecutor does.
  void shutdown() noexcept {
    stopping.store(true, std::memory_order_release);
    for (auto& w : workers) w->parker->unpark();
    for (auto& w : workers) {
      if (w->thread.joinable()) w->thread.join();
    }
    {
      std::lock_guard lock(inject_mutex);
      shut_down_inject = true;
    }
    for (Shard& shard : shards) {
      std::lock_guard lock(shard.mutex);
      shut_down = true;
    }
    for (Shard& shard : shards) {
      for (;;) {
        TaskHeader* task;
        {
          std::lock_guard lock(shard.mutex);
          if (shard.tasks.empty()) break;
          task = &shard.tasks.front();
          shard.tasks.pop_front();
        }
        detail::task_shutdown(task);
        detail::TaskSnapshot after;
        if (task->state.unregister(1, after)) detail::task_free(task, after);
      }
    }
    // Queued tasks are closed now: dropping their Runnables destroys the futures.
    for (auto& w : workers) {
      if (w->lifo) (void)Runnable::adopt(std::exchange(w->lifo, nullptr));
      while (TaskHeader* task = w->queue.pop()) (void)Runnable::adopt(task);
    }
    for (;;) {
      TaskHeader* task;
      {
        std::lock_guard lock(inject_mutex);
        if (inject.empty()) break;
        task = &inject.front();
        inject.pop_front();
      }
      (void)Runnable::adopt(task);
    }
  }

  ThreadPoolOptions options;
  std::atomic<bool> driver_held{false};  // a worker sleeps in (or polls) the driver
  std::vector<std::unique_ptr<Worker>> workers;
  std::mutex inject_mutex;
  RunQueue inject;                  // guarded by inject_mutex
  bool shut_down_inject = false;    // guarded by inject_mutex
  std::atomic<std::size_t> inject_size{0};
  std::mutex idle_mutex;
  std::vector<Worker*> idle;        // guarded by idle_mutex
  std::atomic<std::uint64_t> idle_state{0};  // idle workers (low half), searching workers (high half)
  std::atomic<bool> stopping{false};
  std::array<Shard, kShards> shards;
  bool shut_down = false;           // guarded by every shard's mutex
};

ThreadPool::ThreadPool(std::size_t threads, ThreadPoolOptions options) {
  if (threads == 0) throw std::invalid_argument("pollux::ThreadPool: needs at least one thread, got 0");
  shared_ = make_arc<Shared>(threads, std::move(options));
  shared_->start();
}

ThreadPool::~ThreadPool() { shared_->shutdown(); }

detail::Scheduler& ThreadPool::scheduler() const noexcept { return *shared_; }

void ThreadPool::check_not_worker(const char* what) const {
  if (current_pool == shared_.get()) {
    throw std::logic_error(std::string("pollux::ThreadPool::") + what +
                           ": called on one of the pool's own workers, which it would block; inside a task, "
                           "await the JoinHandle (or spawn the work) instead");
  }
}

std::size_t ThreadPool::threads() const noexcept { return shared_->workers.size(); }

std::size_t ThreadPool::live_tasks() const {
  std::size_t n = 0;
  for (auto& shard : shared_->shards) {
    std::lock_guard lock(shard.mutex);
    n += shard.tasks.size();
  }
  return n;
}

std::vector<TaskInfo> ThreadPool::tasks() const {
  std::vector<TaskInfo> out;
  std::int64_t now = detail::coarse_now_ns();
  for (auto& shard : shared_->shards) {
    std::lock_guard lock(shard.mutex);
    for (TaskHeader& task : shard.tasks) out.push_back(detail::task_info(&task, now));
  }
  return out;
}

}  // namespace pollux
