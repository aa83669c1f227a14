// The worker loop of ThreadPool: where a task runs, where a wake goes, how
// an idle worker finds work, sleeps, and takes the driver.
//
// Each turn of the loop (tokio's worker.rs, step for step):
//   1. every kEventInterval tasks, let the driver fire due timers and ready
//      sockets, and look at the inject queue before the local queue;
//   2. run the next task of the local queue, else a share of the inject
//      queue, then up to kMaxLifoRuns tasks from the LIFO slot;
//   3. with none, become a searcher (Idle) and steal half of another
//      worker's queue;
//   4. with none to steal, park: sleep in the driver if no other worker
//      does (so a socket or timer wakes this thread directly and its tasks
//      run here at once, with no hand-off), else on the worker's futex.
//
// Shutdown protocol (ThreadPool::Shared::shutdown, in thread_pool.cpp):
//   1. `stopping_` is set and every worker unparked;
//   2. each worker finishes the task it is polling, leaves its loop (the
//      flag is read at each turn and after each wake), waits for the
//      others to leave theirs, closes its thread park and runs
//      on_thread_stop;
//   3. the destroyer joins the workers: from here on no task runs;
//   4. the inject queue closes: a wake from another thread now leaves its
//      Runnable on the late list, for step 8;
//   5. the registry closes: a spawn now cancels its task at once;
//   6. every registered task is cancelled: an idle one's future destroyed,
//      a scheduled one counted as awaited (its Runnable is in a queue, or
//      in a waker's hands on its way to the late list);
//   7. the local queues, LIFO slots and the inject queue are drained:
//      dropping each Runnable destroys a queued task's future;
//   8. until every awaited Runnable has been dropped, the destroyer waits
//      for the late list and drops what arrives there.
//
// Why this order:
//   - Workers stop (1-3) before anything is closed or cancelled, so that no
//     future is destroyed while another thread polls it, and every future
//     is destroyed on this thread, after the last poll (rule 5 without a
//     lock on the task).
//   - The inject queue closes (4) before the registry is swept (6): a wake
//     from outside (a timer thread, a socket's completion, a user thread)
//     that came after the sweep would otherwise queue a task that nobody
//     runs and nobody drops. Once closed, such a wake cancels instead.
//   - The registry closes (5) before the sweep (6) for the same reason on
//     the spawn side: a future destroyed in the sweep may spawn in its
//     destructor; that spawn must not add a task behind the sweep.
//   - Cancelling (6) comes before draining the queues (7): cancelling marks
//     each task closed, so that dropping its Runnable in 7 destroys the
//     future instead of scheduling it again, and a task that was both
//     registered and queued is destroyed exactly once.
//   - The destroyer waits for late Runnables (8) rather than letting the
//     waker's thread drop them: a wake runs inside whatever its caller
//     holds (a blocking job's waker slot, whose handle's destructor waits
//     for that slot: a thread spinning on itself), and the future's
//     destructor may touch the driver, which goes right after the pool.
//     The wait is short: a Runnable counted in 6 is at most one push away.
//     Each awaited task has exactly one Runnable (a wake of a scheduled
//     task makes none), and a task idle in 6 is complete, so no wake can
//     make a Runnable the count does not expect.
#include "shared.hpp"

#include "pollux/core/coop.hpp"
#include "pollux/exec/detail/exec_context.hpp"

namespace pollux {

using detail::MutexLock;
using detail::TaskHeader;
using detail::TaskList;
using namespace detail::multi_thread;

// The worker this thread is, and its pool, are in the thread context: a
// wake compares the pool, so a task of pool A woken on a worker of pool B
// goes to A's inject queue.
ThreadPool::Shared::Worker* ThreadPool::Shared::current_worker() const noexcept {
  const detail::ExecThreadContext& context = detail::exec_context();
  return context.worker_pool == this ? context.worker : nullptr;
}

void ThreadPool::Shared::run_worker(Worker& self) {
  if (options_.on_thread_start) options_.on_thread_start();
  if (options_.driver) self.parker->attach_thread_park(options_.driver->make_thread_park());
  started_.count_down();
  {
    detail::ContextScope<&detail::ExecThreadContext::worker> worker(&self);
    detail::ContextScope<&detail::ExecThreadContext::worker_pool> pool(this);
    detail::CurrentSchedulerScope scheduler(this);
    if (detail::kMetrics && options_.histograms) {
      work<true>(self);
    } else {
      work<false>(self);
    }
  }
  self.counters.publish();
  // A task another worker still polls may use this worker's thread park
  // (a stream on its ring): it closes only once every worker is out.
  left_loop_.arrive_and_wait();
  self.parker->close_thread_park();
  if (options_.on_thread_stop) options_.on_thread_stop();
}

template <bool kMeasured>
void ThreadPool::Shared::work(Worker& self) {
  coop::BudgetScope budget;  // each task refills it
  while (!stopping_.load(std::memory_order_acquire)) {
    ++self.tick;
    if (self.tick % kEventInterval == 0) {
      self.counters.publish();
      poll_driver(self);
    }
    if (TaskHeader* task = next_task(self)) {
      run_task<kMeasured>(self, task);
    } else if (TaskHeader* stolen = steal_work(self)) {
      run_task<kMeasured>(self, stolen);
    } else {
      park(self);
    }
  }
}

TaskHeader* ThreadPool::Shared::next_task(Worker& self) {
  // Now and then the inject queue goes first, so that remote wakes and
  // spawns are not starved by local work.
  if (self.tick % kEventInterval == 0) {
    if (TaskHeader* task = pop_inject(self)) return task;
  }
  if (TaskHeader* task = self.queue.pop()) return task;
  return pop_inject(self);
}

// A share of the inject queue: one task to run, the rest to our queue, so
// one lock serves many tasks.
TaskHeader* ThreadPool::Shared::pop_inject(Worker& self) {
  std::size_t room = std::min<std::size_t>(self.queue.free_slots(), LocalQueue::kCapacity / 2);
  TaskList batch = inject_.pop_share(workers_.size(), 1 + room);
  TaskHeader* first = batch.pop_front();
  while (TaskHeader* task = batch.pop_front()) self.queue.push_back_unchecked(task);
  return first;
}

TaskHeader* ThreadPool::Shared::steal_work(Worker& self) {
  if (!self.searching) {
    if (!idle_.transition_worker_to_searching()) return nullptr;  // enough others are searching
    self.searching = true;
  }
  std::size_t n = workers_.size();
  self.rng ^= self.rng << 13;  // xorshift64
  self.rng ^= self.rng >> 7;
  self.rng ^= self.rng << 17;
  std::size_t start = static_cast<std::size_t>(self.rng % n);
  for (std::size_t k = 0; k < n; ++k) {
    Worker& victim = *workers_[(start + k) % n];
    if (&victim == &self) continue;
    std::uint32_t taken = 0;
    if (TaskHeader* task = victim.queue.steal_into(self.queue, &taken)) {
      detail::count(self.counters.steal_operations);
      detail::count(self.counters.steals, taken);
      return task;
    }
  }
  return pop_inject(self);
}

template <bool kMeasured>
void ThreadPool::Shared::run_task(Worker& self, TaskHeader* task) {
  if (self.searching) {
    self.searching = false;
    // The last searcher to find work wakes another: there may be more.
    if (idle_.transition_worker_from_searching()) notify_parked();
  }
  poll_task<kMeasured>(self, task);
  for (std::uint32_t runs = 0; self.lifo != nullptr; ++runs) {
    if (runs == kMaxLifoRuns) {
      // Enough: the slot's task waits its turn where others may steal it
      // (a chain of spawns still stays on one worker: see push_back_local).
      push_back_local(self, std::exchange(self.lifo, nullptr));
      break;
    }
    poll_task<kMeasured>(self, std::exchange(self.lifo, nullptr));
  }
}

template <bool kMeasured>
void ThreadPool::Shared::poll_task(Worker& self, TaskHeader* task) {
  self.current = task;
  self.counters.note_poll();
  bool finished = detail::run_task_once<kMeasured>(self.counters, task);
  self.current = nullptr;
  if (finished) retire(task, detail::kFinishedRunRefs);
}

void ThreadPool::Shared::schedule(Runnable runnable) {
  TaskHeader* task = runnable.release();
  Worker* self = current_worker();
  if (self == nullptr) {
    // From outside the pool. Once pushed, the task may be taken by a
    // shutdown and dropped at once, and with it the last reference to this
    // scheduler: hold one of our own until the push and the notify are done.
    Arc<Shared> keep(this);
    push_inject(task);
    notify_parked();
    return;
  }
  if (task == self->current) {
    push_back_local(*self, task);  // a yield: behind the work that waited
    return;
  }
  if (self->in_driver) {
    // The driver wakes tasks in bursts (an epoll_wait's worth of sockets):
    // queue them quietly, and wake one helper after the burst (see
    // after_driver), not one per task.
    push_local(*self, task);
    ++self->driver_wakes;
    return;
  }
  // The task this one woke runs next, while what they share is hot. Only a
  // displaced task is worth a helper: the slot itself is not stealable,
  // and this worker gets to it as soon as the current task returns.
  if (TaskHeader* displaced = std::exchange(self->lifo, task)) {
    push_local(*self, displaced);
    notify_parked();
  }
}

void ThreadPool::Shared::push_local(Worker& self, TaskHeader* task) {
  LocalQueue::Pushed pushed = self.queue.push_back_or_overflow(task, inject_);
  if (pushed == LocalQueue::Pushed::Here) [[likely]]
    return;
  if (pushed == LocalQueue::Pushed::Overflowed) {
    detail::count(self.counters.overflows);
  } else {
    (void)Runnable::adopt(task);  // refused, shutting down: cancel
  }
}

// A task that goes to the back of our queue is worth a helper only if
// other tasks wait there too: alone, it is simply the next to run here.
void ThreadPool::Shared::push_back_local(Worker& self, TaskHeader* task) {
  bool others_wait = !self.queue.empty();
  push_local(self, task);
  if (others_wait) notify_parked();
}

void ThreadPool::Shared::push_inject(TaskHeader* task) {
  if (inject_.push(task)) [[likely]]
    return;
  // Closed: the pool is shutting down, and the thread doing it waits for
  // this Runnable (shutdown step 8). Dropping it here would destroy the
  // future inside a wake, on a thread that may hold what the destructor
  // needs: the waker slot this very wake came through, say.
  late_.push(task);
}

void ThreadPool::Shared::notify_parked() {
  if (auto worker = idle_.worker_to_notify()) workers_[*worker]->parker->unpark();
}

void ThreadPool::Shared::notify_if_work_pending(const Worker& self) {
  for (const auto& worker : workers_) {
    if (worker.get() != &self && !worker->queue.empty()) {
      notify_parked();
      return;
    }
  }
  if (!inject_.empty()) notify_parked();
}

void ThreadPool::Shared::park(Worker& self) {
  // A worker that parks while nobody searches looks everywhere once more after announcing itself
  // (see idle.hpp): a task pushed meanwhile wakes somebody, maybe us.
  if (idle_.transition_worker_to_parked(self.index, std::exchange(self.searching, false))) {
    notify_if_work_pending(self);
  }
  while (!stopping_.load(std::memory_order_acquire)) {
    self.counters.begin_park();
    sleep(self);
    self.counters.end_park();
    if (!self.queue.empty()) {
      // The driver woke tasks onto our queue: run them. Not as a searcher,
      // unless a notifier chose us meanwhile.
      if (!idle_.unpark_worker_by_id(self.index)) self.searching = true;
      detail::count(self.counters.unparks);
      break;
    }
    if (!idle_.is_parked(self.index)) {
      self.searching = true;  // a notifier chose us: look for the work
      detail::count(self.counters.unparks);
      break;
    }
    // A timer that woke nobody here, or a spurious wake: sleep again.
  }
  // Off the sleepers now, so the helper woken here is somebody else.
  after_driver(self);
}

void ThreadPool::Shared::sleep(Worker& self) {
  if (options_.driver && !driver_held_.exchange(true, std::memory_order_acquire)) {
    self.in_driver = true;
    self.parker->park_in_driver();
    self.in_driver = false;
    driver_held_.store(false, std::memory_order_release);
  } else {
    // A thread park (the worker's ring) reaps completions while it sleeps:
    // the tasks they wake queue here as the driver's do. (Parked on the
    // futex instead, this thread wakes nothing, and the flag is never read.)
    self.in_driver = true;
    self.parker->park();
    self.in_driver = false;
  }
}

// A busy worker lets the driver fire due timers and ready sockets, unless
// another worker sleeps in it (and so does that itself).
// The worker's own thread park (its ring) is polled every time.
void ThreadPool::Shared::poll_driver(Worker& self) {
  if (!options_.driver) return;
  self.in_driver = true;
  self.parker->poll_thread();
  if (!driver_held_.load(std::memory_order_relaxed) && !driver_held_.exchange(true, std::memory_order_acquire)) {
    options_.driver->poll();
    driver_held_.store(false, std::memory_order_release);
  }
  self.in_driver = false;
  after_driver(self);
}

// More tasks than this worker runs next are worth one helper.
void ThreadPool::Shared::after_driver(Worker& self) {
  if (std::exchange(self.driver_wakes, 0) > 1) notify_parked();
}

}  // namespace pollux
