// The multi-thread scheduler's idle protocol (src/exec/multi_thread/idle.hpp)
// and the first steps of its shutdown, run under every interleaving of two
// workers and the thread that spawns onto them and shuts them down. The
// workers here are small: each turn follows the steps of worker.cpp (its
// queue, a share of the inject queue, stealing as a searcher, parking), over
// the real Idle, Parker, local and inject queues compiled with the model's
// atomics, mutex and futex. What runs is a task's id, not a future.
//
// The invariants: every task spawned runs exactly once, and nobody sleeps
// while work waits that only a sleeper could take. A wake-up the protocol
// loses leaves the spawner waiting for a task that never runs while every
// worker sleeps, which the checker reports as a deadlock.
#include <doctest/doctest.h>

#include <array>
#include <memory>
#include <vector>

#include "../../src/exec/multi_thread/config.hpp"
#include "../../src/exec/multi_thread/idle.hpp"
#include "../../src/exec/multi_thread/inject_queue.hpp"
#include "../../src/exec/multi_thread/local_queue.hpp"
#include "model_task.hpp"
#include "pollux/exec/parker.hpp"

namespace {

using model_task::report;
using pollux::Arc;
using pollux::Parker;
using pollux::detail::TaskHeader;
using pollux::detail::TaskList;
using pollux::detail::multi_thread::BasicLocalQueue;
using pollux::detail::multi_thread::Idle;
using pollux::detail::multi_thread::InjectQueue;

constexpr std::size_t kWorkers = 2;
constexpr int kTasks = 3;

struct Pool;

/// What a task does when it runs, given the pool and the worker it runs on.
using Body = void (*)(Pool&, std::size_t worker);

struct Worker {
  BasicLocalQueue<4> queue;
  Arc<Parker> parker = pollux::make_arc<Parker>();
  TaskHeader* lifo = nullptr;
  bool searching = false;
};

struct Pool {
  Idle idle{kWorkers};
  InjectQueue inject;
  std::array<Worker, kWorkers> workers;
  pollux::detail::Atomic<bool> stopping{false};
  std::vector<std::unique_ptr<TaskHeader>> tasks;
  std::array<Body, kTasks> bodies{};
  // Only one model thread runs at a time: plain counters are exact.
  std::array<int, kTasks> ran{};      // times each task ran
  std::array<int, kTasks> drained{};  // times shutdown dropped it from a queue

  Pool() {
    for (int i = 0; i < kTasks; ++i) tasks.push_back(std::make_unique<TaskHeader>(nullptr, 1, false, i));
  }
  TaskHeader* task(int id) { return tasks[id].get(); }
  int ran_total() const { return ran[0] + ran[1] + ran[2]; }

  // ThreadPool::Shared::schedule from outside the workers.
  void spawn_remote(int id) {
    if (!inject.push(task(id))) ++drained[id];  // closed: the spawner drops it
    notify_parked();
  }

  // ThreadPool::Shared::schedule on a worker: the woken task goes to the
  // LIFO slot, and the task it displaces to the queue, with a helper.
  void spawn_local(std::size_t self, int id) {
    if (TaskHeader* displaced = std::exchange(workers[self].lifo, task(id))) {
      if (workers[self].queue.push_back_or_overflow(displaced, inject) == BasicLocalQueue<4>::Pushed::Refused)
        ++drained[displaced->id];
      notify_parked();
    }
  }

  void notify_parked() {
    if (auto worker = idle.worker_to_notify()) workers[*worker].parker->unpark();
  }

  // ThreadPool::Shared::shutdown, steps 1, 2 and 4: stop, wake everyone,
  // and (once the workers are out) close the inject queue.
  void stop() {
    stopping.store(true);
    for (Worker& worker : workers) worker.parker->unpark();
  }

  // The worker loop (ThreadPool::Shared::run_worker), without the driver.
  void run_worker(std::size_t self) {
    while (!stopping.load()) {
      if (TaskHeader* task = next_task(self)) {
        run_task(self, task);
      } else if (TaskHeader* stolen = steal_work(self)) {
        run_task(self, stolen);
      } else {
        park(self);
      }
    }
  }

  TaskHeader* next_task(std::size_t self) {
    if (TaskHeader* task = workers[self].queue.pop()) return task;
    return pop_inject(self);
  }

  TaskHeader* pop_inject(std::size_t self) {
    Worker& me = workers[self];
    TaskList batch = inject.pop_share(kWorkers, 1 + me.queue.free_slots());
    TaskHeader* first = batch.pop_front();
    while (TaskHeader* task = batch.pop_front()) me.queue.push_back_unchecked(task);
    return first;
  }

  TaskHeader* steal_work(std::size_t self) {
    Worker& me = workers[self];
    if (!me.searching) {
      if (!idle.transition_worker_to_searching()) return nullptr;
      me.searching = true;
    }
    Worker& victim = workers[(self + 1) % kWorkers];
    if (TaskHeader* task = victim.queue.steal_into(me.queue)) return task;
    return pop_inject(self);
  }

  void run_task(std::size_t self, TaskHeader* task) {
    Worker& me = workers[self];
    if (me.searching) {
      me.searching = false;
      if (idle.transition_worker_from_searching()) notify_parked();
    }
    poll_task(self, task);
    for (std::uint32_t runs = 0; me.lifo != nullptr; ++runs) {
      if (runs == pollux::detail::multi_thread::kMaxLifoRuns) {
        push_back_local(self, std::exchange(me.lifo, nullptr));
        break;
      }
      poll_task(self, std::exchange(me.lifo, nullptr));
    }
  }

  void poll_task(std::size_t self, TaskHeader* task) {
    ++ran[task->id];
    if (Body body = bodies[task->id]) body(*this, self);
  }

  // ThreadPool::Shared::push_back_local: a task queued behind others is
  // worth a helper; alone, it is the next to run here.
  void push_back_local(std::size_t self, TaskHeader* task) {
    bool others_wait = !workers[self].queue.empty();
    if (workers[self].queue.push_back_or_overflow(task, inject) == BasicLocalQueue<4>::Pushed::Refused)
      ++drained[task->id];
    if (others_wait) notify_parked();
  }

  void park(std::size_t self) {
    Worker& me = workers[self];
    if (idle.transition_worker_to_parked(self, std::exchange(me.searching, false))) notify_if_work_pending(self);
    while (!stopping.load()) {
      me.parker->park();
      if (!me.queue.empty()) {
        if (!idle.unpark_worker_by_id(self)) me.searching = true;
        break;
      }
      if (!idle.is_parked(self)) {
        me.searching = true;
        break;
      }
    }
  }

  void notify_if_work_pending(std::size_t self) {
    for (std::size_t i = 0; i < kWorkers; ++i) {
      if (i != self && !workers[i].queue.empty()) {
        notify_parked();
        return;
      }
    }
    if (!inject.empty()) notify_parked();
  }

  // Shutdown's step 7: what is still queued is dropped, once.
  void drain() {
    for (Worker& worker : workers) {
      if (worker.lifo != nullptr) ++drained[std::exchange(worker.lifo, nullptr)->id];
      while (TaskHeader* task = worker.queue.pop()) ++drained[task->id];
    }
    TaskList left = inject.close();
    while (TaskHeader* task = left.pop_front()) ++drained[task->id];
  }
};

/// Explores `spawner` racing two workers; every task spawned must run or
/// be drained exactly once, and `all_run` tasks must have run.
template <class Spawner>
void explore(int bound, std::array<Body, kTasks> bodies, Spawner spawner, int spawned, bool all_run) {
  model::Checker checker(bound);
  report(checker.explore([=] {
    auto pool = std::make_shared<Pool>();
    pool->bodies = bodies;
    model::Checker::Execution e;
    for (std::size_t i = 0; i < kWorkers; ++i) e.threads.push_back([pool, i] { pool->run_worker(i); });
    e.threads.push_back([pool, spawner] { spawner(*pool); });
    e.finish = [pool, spawned, all_run] {
      pool->drain();
      for (int id = 0; id < spawned; ++id) {
        model::check(pool->ran[id] + pool->drained[id] == 1, "a task was lost, or run twice");
        if (all_run) model::check(pool->ran[id] == 1, "a task never ran");
      }
    };
    return e;
  }));
}

// The spawner of a ThreadPool user: spawn tasks 0 to Spawned - 1, wait
// until Runs tasks ran (block_on), then drop the pool.
template <int Spawned, int Runs = Spawned>
void spawn_wait_stop(Pool& pool) {
  for (int id = 0; id < Spawned; ++id) pool.spawn_remote(id);
  model::block_until([&pool] { return pool.ran_total() == Runs; });
  pool.stop();
}

// Task 0 wakes tasks 1 and 2 on its own worker (task 2 takes the LIFO
// slot, task 1 goes to the queue), then waits (as no real task may: the
// model's way to say "this worker stays busy") until task 1 ran elsewhere.
// Only a helper woken for the displaced task can run it.
void wake_two_and_wait_for_a_helper(Pool& pool, std::size_t self) {
  pool.spawn_local(self, 1);
  pool.spawn_local(self, 2);
  model::block_until([&pool] { return pool.ran[1] == 1; });
}

}  // namespace

TEST_CASE("a task spawned from outside while the workers go idle is run") {
  explore(1, {}, spawn_wait_stop<1>, 1, true);
}

TEST_CASE("two tasks spawned from outside, back to back, both run") { explore(1, {}, spawn_wait_stop<2>, 2, true); }

TEST_CASE("a task displaced from a busy worker's LIFO slot wakes a helper that takes it") {
  explore(1, {wake_two_and_wait_for_a_helper}, spawn_wait_stop<1, 3>, 3, true);
}

TEST_CASE("a shutdown racing a spawn and idle workers leaves nobody asleep and drops what did not run, once") {
  explore(
      2, {},
      [](Pool& pool) {
        pool.spawn_remote(0);
        pool.stop();
      },
      1, false);
}
