// LocalExecutor's queues, loop and shutdown.
#include "pollux/exec/local_executor.hpp"

#include <chrono>
#include <mutex>
#include <optional>
#include <utility>
#include <stdexcept>

#include "pollux/core/coop.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/intrusive_list.hpp"
#include "late_arrivals.hpp"
#include "task_list.hpp"
#include "worker_counters.hpp"

namespace pollux {

using detail::TaskHeader;

using RunQueue = detail::TaskList;
using Registry = detail::CountedIntrusiveList<TaskHeader, &TaskHeader::registry_hook>;

class LocalExecutor::Shared : public detail::Scheduler {
 public:
  // An executor made to measure histograms has a scheduler of its own,
  // so that the other executors' wakes do not even test for them.
  static Arc<Shared> make(Arc<IdleDriver> driver, bool measure_histograms);

  Shared(Arc<IdleDriver> driver, bool measure_histograms)
      : parker(driver ? make_arc<Parker>(std::move(driver)) : Parker::current()),
        histograms(detail::kMetrics && measure_histograms) {}
  ~Shared() override { cancel_all(); }

  void schedule(Runnable runnable) override {
    if (detail::exec_context().scheduler == this) {
      local.push_back(runnable.release());  // our own thread, inside the loop: no lock
      return;
    }
    if (detail::exec_context().waiting_outside == this) {
      // Our own thread, in the outside loop between turns (an Asio handler):
      // no lock, and the loop is told directly instead of through wait_fd.
      local.push_back(runnable.release());
      if (!std::exchange(outside_woken, true)) outside_waker->wake_by_ref();
      return;
    }
    // From another thread. Once the lock is let go, a shutdown may take the
    // task and drop it, and with it the last reference to this scheduler,
    // before the unpark below: hold one of our own until then.
    Arc<Shared> keep(this);
    bool late;
    {
      detail::MutexLock lock(mutex);
      late = shut_down;
      if (!late) {
        inject.push_back(runnable.release());
        injected.store(true, std::memory_order_release);
      }
    }
    if (late) {
      // cancel_all waits for this Runnable, to destroy the future on the
      // executor's thread rather than inside this wake.
      late_arrivals.push(runnable.release());
      return;
    }
    parker->unpark();
  }

  void bind(Runnable runnable) override {
    registry.push_back(*runnable.header());
    live.set_owned(registry.size());
    detail::count(spawned);
    schedule(std::move(runnable));
  }

  // Moves what other threads woke to the local queue.
  bool take_injected() {
    if (!injected.load(std::memory_order_acquire)) return false;
    detail::MutexLock lock(mutex);
    injected.store(false, std::memory_order_relaxed);
    bool any = !inject.empty();
    local.append(std::move(inject));
    return any;
  }

  // A finished task leaves the registry; `refs`: the registry's reference,
  // plus the Runnable's when run_retaining handed it over.
  void retire(TaskHeader* task, std::uint64_t refs = detail::kRegistryRef) noexcept {
    if (listing_next == task) listing_next = task->registry_hook.next;  // a listing in slices stood on it
    registry.erase(*task);
    live.set_owned(registry.size());
    detail::count(finished);
    detail::task_unregister(task, refs);
  }

  // Cancels every live task, destroying every future on this thread. Idle
  // ones lose their future here; a scheduled one is marked closed and its
  // Runnable dropped when it is found in a queue, or when it arrives: a
  // wake on another thread may still be handing it over, and it is waited
  // for (a future destroyed inside that wake could wait on the very waker
  // slot the wake holds; see ThreadPool's shutdown, step 8).
  void cancel_all() noexcept {
    {
      detail::MutexLock lock(mutex);
      shut_down = true;
    }
    std::size_t awaited = 0;
    while (!registry.empty()) {
      TaskHeader* task = &registry.front();
      if (detail::task_shutdown(task)) ++awaited;  // may wake or cancel other tasks: handled below
      retire(task);
    }
    // What came from other threads before shut_down was set is in the
    // inject queue; what comes after goes to late_arrivals.
    {
      detail::MutexLock lock(mutex);
      local.append(std::move(inject));
    }
    std::size_t dropped = drain(local);
    late_arrivals.drop_until(dropped, awaited);
  }

  // Drops every Runnable of `queue`, destroying the futures of its closed
  // tasks; returns how many.
  static std::size_t drain(RunQueue& queue) noexcept {
    std::size_t n = 0;
    for (; !queue.empty(); ++n) (void)Runnable::adopt(queue.pop_front());
    return n;
  }

  RunQueue local;     // the executor's thread only
  Registry registry;  // the executor's thread only
  detail::Mutex mutex;
  RunQueue inject POLLUX_GUARDED_BY(mutex);
  bool shut_down POLLUX_GUARDED_BY(mutex) = false;
  detail::LateArrivals late_arrivals;  // what other threads wake once shut_down
  detail::Atomic<bool> injected{false};
  // The thread's own parker, or one that sleeps in the driver.
  Arc<Parker> parker;
  // The metrics: the executor's thread writes them, any thread reads.
  const bool histograms;
  const std::int64_t started_ns = detail::metrics_now_ns();
  detail::WorkerCounters counters;
  detail::Counter spawned;
  detail::Counter finished;
  detail::Counter local_depth;  // `local`'s length at the last batch
  detail::Counter live;         // registry.size(), for other threads (kept even without metrics)

  // tasks() for another thread (a console): it asks, and the executor's
  // thread answers between batches, when the registry is its to read. It
  // lists kListingSlice tasks per turn, so that a snapshot of a million
  // tasks delays the other tasks by one slice at a time, never by the whole
  // list; `listing_next` is the next task to list, which retire() moves on
  // when it retires that very task.
  static constexpr std::size_t kListingSlice = 256;
  detail::Atomic<bool> tasks_asked{false};
  detail::Mutex asking;  // one asker at a time
  detail::Mutex answer_mutex;
  detail::CondVar answered;
  std::optional<std::vector<TaskInfo>> answer POLLUX_GUARDED_BY(answer_mutex);
  bool waiting_outside = false;        // the executor's thread only: turn() left the loop to wait on wait_fd()
  std::optional<Waker> outside_waker;  // the executor's thread only: set_outside_waker's
  bool outside_woken = false;          // the executor's thread only: outside_waker was woken in this wait
  bool listing = false;                // the executor's thread only, like the three below
  TaskHeader* listing_next = nullptr;  // null: the listing reached the end
  std::vector<TaskInfo> listed;

  std::vector<TaskInfo> snapshot() const {
    std::vector<TaskInfo> out;
    std::int64_t now = detail::coarse_now_ns();
    for (const TaskHeader& task : registry) out.push_back(detail::task_info(const_cast<TaskHeader*>(&task), now));
    return out;
  }

  // The executor's thread, once per batch: one relaxed load unless asked
  // or listing.
  void answer_if_asked() {
    if (!listing) {
      if (!tasks_asked.load(std::memory_order_relaxed) || !tasks_asked.exchange(false, std::memory_order_acquire))
        return;
      listing = true;
      listed.clear();
      listing_next = registry.empty() ? nullptr : &registry.front();
    }
    std::int64_t now = detail::coarse_now_ns();
    for (std::size_t i = 0; i < kListingSlice && listing_next != nullptr; ++i) {
      listed.push_back(detail::task_info(listing_next, now));
      listing_next = listing_next->registry_hook.next;
    }
    if (listing_next != nullptr) return;  // the rest at the next turns
    listing = false;
    {
      detail::MutexLock lock(answer_mutex);
      answer = std::exchange(listed, {});
    }
    answered.notify_all();
  }
};

Arc<LocalExecutor::Shared> LocalExecutor::Shared::make(Arc<IdleDriver> driver, bool measure_histograms) {
  if (detail::kMetrics && measure_histograms)
    return make_arc<detail::StampingScheduler<Shared>>(std::move(driver), true);
  return make_arc<Shared>(std::move(driver), false);
}

LocalExecutor::LocalExecutor() : LocalExecutor(Arc<IdleDriver>()) {}

LocalExecutor::LocalExecutor(Arc<IdleDriver> driver, UnhandledException unhandled, LostWake lost_wake)
    : LocalExecutor(std::move(driver), LocalExecutorOptions{unhandled, lost_wake}) {}

LocalExecutor::LocalExecutor(Arc<IdleDriver> driver, LocalExecutorOptions options)
    : shared_(Shared::make(std::move(driver), options.histograms)), owner_(std::this_thread::get_id()) {
  shared_->unhandled_exception = options.unhandled_exception;
  shared_->lost_wake = options.lost_wake;
}

const Arc<Parker>& LocalExecutor::parker() const noexcept { return shared_->parker; }

LocalExecutor::~LocalExecutor() {
  // The task (or block_on's future) doing this would be freed under its
  // own poll: stop with the cause named rather than run on freed memory.
  if (detail::exec_context().scheduler == shared_.get()) {
    detail::contract_violation_text(
        "pollux::LocalExecutor (or the current-thread Runtime that owns it) destroyed from inside one of its own "
        "tasks or its block_on; destroy it after block_on returns");
  }
  if (detail::exec_context().waiting_outside == shared_.get()) detail::exec_context().waiting_outside = nullptr;
  shared_->cancel_all();
}

detail::Scheduler& LocalExecutor::scheduler() const noexcept { return *shared_; }

void LocalExecutor::check_owner(const char* what) const {
  if (std::this_thread::get_id() != owner_) {
    throw std::logic_error(std::string("pollux::LocalExecutor::") + what +
                           ": called from a thread that is not the executor's; a LocalExecutor runs on the thread "
                           "that made it (use ThreadPool for tasks spawned from anywhere)");
  }
}

void LocalExecutor::check_not_running(const char* what) const {
  if (detail::exec_context().scheduler == shared_.get()) {
    throw std::logic_error(std::string("pollux::LocalExecutor::") + what +
                           ": called from inside one of the executor's own tasks; await the future there "
                           "instead (or spawn it)");
  }
}

LocalExecutor::LoopScope::LoopScope(LocalExecutor& executor)
    : scheduler_(executor.shared_.get()), parker_(executor.shared_->parker.get()) {}

namespace {

// Runs up to `max` tasks of `shared`'s local queue. Made twice, so that an
// executor that does not measure histograms never tests for them per poll.
template <bool kMeasured, class Shared>
std::size_t run_batch(Shared& shared, std::size_t max) {
  coop::BudgetScope budget;  // each task refills it; the outer one comes back after the batch
  std::size_t ran = 0;
  while (ran < max && !shared.local.empty()) {
    TaskHeader* task = shared.local.pop_front();
    if (detail::run_task_once<kMeasured>(shared.counters, task)) shared.retire(task, detail::kFinishedRunRefs);
    ++ran;
  }
  return ran;
}

}  // namespace

std::size_t LocalExecutor::run_queued(std::size_t max) {
  Shared& shared = *shared_;
  shared.answer_if_asked();
  shared.take_injected();
  if constexpr (detail::kMetrics) shared.local_depth.set_owned(shared.local.size());
  std::size_t ran =
      detail::kMetrics && shared.histograms ? run_batch<true>(shared, max) : run_batch<false>(shared, max);
  shared.counters.note_polls(ran);
  shared.counters.publish();
  return ran;
}

void LocalExecutor::wait_for_work() {
  Shared& shared = *shared_;
  if (shared.listing) {
    // A listing in slices goes on at the next turn, not after a sleep; the
    // timers and sockets are looked at in between, without waiting.
    poll_driver();
    return;
  }
  if (shared.parker->take_wake_during_poll()) return;
  if (shared.take_injected()) return;
  shared.counters.begin_park();
  if (shared.parker->has_driver()) {
    shared.parker->park_in_driver();
  } else {
    shared.parker->park();
  }
  shared.counters.end_park();
  if constexpr (detail::kMetrics) {
    if (shared.take_injected() || !shared.local.empty()) detail::count(shared.counters.unparks);
  }
}

void LocalExecutor::poll_driver() {
  if (shared_->parker->has_driver()) shared_->parker->driver().poll();
}

void LocalExecutor::run() {
  check_owner("run");
  check_not_running("run");
  end_outside_wait();
  LoopScope loop(*this);
  while (!shared_->registry.empty()) {
    if (run_queued(61) != 0) {
      poll_driver();
    } else {
      wait_for_work();
    }
  }
}

bool LocalExecutor::turn(std::size_t max_tasks) {
  check_owner("turn");
  check_not_running("turn");
  Shared& shared = *shared_;
  if (!shared.parker->has_driver() || shared.parker->driver().wait_fd() < 0) {
    throw std::logic_error(
        "pollux::LocalExecutor::turn: needs a driver with a wait_fd (a current-thread runtime on epoll: "
        "RuntimeOptions::io_backend = IoBackend::Epoll)");
  }
  if (max_tasks == 0) throw std::invalid_argument("pollux::LocalExecutor::turn: max_tasks is 0");
  IdleDriver& driver = shared.parker->driver();
  if (!end_outside_wait()) driver.poll();
  LoopScope loop(*this);
  if (run_queued(max_tasks) == max_tasks || !shared.local.empty()) return true;
  // Nothing left to run: wait outside, unless a wake came in the meantime
  // (from this thread during the batch, or through the inject queue).
  if (shared.parker->take_wake_during_poll() || shared.take_injected()) return true;
  if (!shared.parker->begin_external_park()) return true;
  if (!driver.begin_external_wait()) {
    shared.parker->end_external_park();
    return true;
  }
  shared.waiting_outside = true;
  if (shared.outside_waker) {
    shared.outside_woken = false;
    detail::exec_context().waiting_outside = &shared;
  }
  return false;
}

void LocalExecutor::set_outside_waker(std::optional<Waker> waker) {
  check_owner("set_outside_waker");
  shared_->outside_waker = std::move(waker);
  if (!shared_->outside_waker && detail::exec_context().waiting_outside == shared_.get()) {
    detail::exec_context().waiting_outside = nullptr;  // from now on, wakes go through wait_fd again
  }
}

bool LocalExecutor::end_outside_wait() {
  Shared& shared = *shared_;
  if (!std::exchange(shared.waiting_outside, false)) return false;
  if (detail::exec_context().waiting_outside == &shared) detail::exec_context().waiting_outside = nullptr;
  shared.parker->end_external_park();
  // Woken through outside_waker: the outside loop is still waiting on the
  // fd too, and turns again if it is readable; no need to look now.
  shared.parker->driver().end_external_wait(!std::exchange(shared.outside_woken, false));
  return true;
}

int LocalExecutor::wait_fd() const noexcept {
  return shared_->parker->has_driver() ? shared_->parker->driver().wait_fd() : -1;
}

std::size_t LocalExecutor::live_tasks() const { return shared_->registry.size(); }

ExecutorMetrics LocalExecutor::metrics() const {
  const Shared& shared = *shared_;
  ExecutorMetrics out;
  out.counted = detail::kMetrics;
  out.workers = 1;
  std::int64_t now = detail::metrics_now_ns();
  out.uptime = std::chrono::nanoseconds(now - shared.started_ns);
  out.spawned_tasks = shared.spawned.get();
  out.finished_tasks = shared.finished.get();
  out.live_tasks = static_cast<std::size_t>(shared.live.get());  // the registry is the executor thread's
  {
    detail::MutexLock lock(shared_->mutex);
    out.inject_queue_depth = shared_->inject.size();
  }
  out.worker.push_back(shared.counters.snapshot(now, shared.started_ns, shared.local_depth.get()));
  out.histograms = shared.histograms;
  if (shared.histograms) {
    out.poll_duration = shared.counters.poll_duration.snapshot();
    out.schedule_latency = shared.counters.schedule_latency.snapshot();
  }
  return out;
}

std::vector<TaskInfo> LocalExecutor::tasks() const {
  check_owner("tasks");
  return shared_->snapshot();
}

std::optional<std::vector<TaskInfo>> LocalExecutor::tasks_within(std::chrono::nanoseconds wait) const {
  if (std::this_thread::get_id() == owner_) return tasks();
  Shared& shared = *shared_;
  detail::MutexLock one(shared.asking);
  {
    detail::MutexLock lock(shared.answer_mutex);
    shared.answer.reset();
  }
  shared.tasks_asked.store(true, std::memory_order_release);
  shared.parker->unpark();  // asleep in its park: it wakes, answers, and sleeps again
  auto deadline = std::chrono::steady_clock::now() + wait;
  detail::UniqueLock lock(shared.answer_mutex);
  while (!shared.answer.has_value()) {
    if (shared.answered.wait_until(lock, deadline) == std::cv_status::timeout) break;
  }
  return std::exchange(shared.answer, std::nullopt);
}

}  // namespace pollux
