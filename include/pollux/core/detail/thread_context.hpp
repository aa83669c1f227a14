// The per-thread context: everything pollux keeps per thread, in one place,
// as tokio's runtime/context.rs. It holds which scheduler's task this
// thread runs (and which worker it is), the task being polled, the block_on
// polling here, the driver's timers, reactor and ring that sleeps and sockets
// find, the blocking pool that spawn_blocking finds, the coop budget, the
// task-local scopes, the contract checks' flag, and two small counters. Every field is borrowed: who sets a
// field owns what it points to and outlives the scope it sets it for (rule
// 5's destructors run inside those scopes). The two per-thread objects that
// own memory and free it at thread exit (a thread's Parker, its slab heap)
// stay apart, in their own files.
//
// One guard sets any field for a scope and puts the outer value back, so
// scopes nest (block_on inside a task, a runtime entered inside another).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <cstdint>
#include <utility>

namespace pollux {

class Parker;
class BlockingPool;

namespace detail {

class Scheduler;
class TimerQueue;
class Reactor;
class Ring;
struct TaskLocalFrame;

struct ThreadContext {
  // exec: the scheduler whose task this thread is running (pollux::spawn
  // spawns there), and, on a ThreadPool worker, its pool and worker.
  Scheduler* scheduler = nullptr;
  const void* pool = nullptr;
  void* worker = nullptr;
  // task: the task being polled here, and whether it woke itself during
  // the poll (its wake is then noted, not queued: see task_waker.hpp).
  const void* running_task = nullptr;
  bool running_task_woken = false;
  // exec: the parker of the block_on polling on this thread.
  Parker* polling_parker = nullptr;
  // time and io: the timers, the reactor and (on the io_uring backend) the
  // ring of the driver installed here, which sleeps and sockets use.
  TimerQueue* timers = nullptr;
  Reactor* reactor = nullptr;
  Ring* ring = nullptr;
  // runtime: where spawn_blocking sends its jobs.
  BlockingPool* blocking_pool = nullptr;
  // task: the innermost TaskLocal scope in force.
  TaskLocalFrame* task_locals = nullptr;
  // core: the coop budget of the current poll (-1: unlimited).
  int coop_budget = -1;
  // core: set by a poll that is Pending forever on purpose (contract checks).
  bool pending_on_purpose = false;
  // future: where the next fair select starts.
  std::size_t select_rotation = 0;
  // task: this thread's block of task ids, [next_task_id, task_id_end).
  std::uint64_t next_task_id = 0;
  std::uint64_t task_id_end = 0;
};

// Constant-initialized and trivially destructible, so reaching it is one
// thread-pointer-relative access, with no init-on-first-use check.
inline thread_local constinit ThreadContext thread_context{};

template <class T>
struct ContextFieldType;
template <class T>
struct ContextFieldType<T ThreadContext::*> {
  using type = T;
};

/// Sets one field of this thread's context for the guard's lifetime; the
/// outer value comes back after. `ContextScope<&ThreadContext::timers>
/// scope(queue);`
template <auto Field>
class [[nodiscard]] ContextScope {
  using T = typename ContextFieldType<decltype(Field)>::type;

 public:
  /// Sets the field to `value`.
  explicit ContextScope(T value) noexcept : saved_(std::exchange(thread_context.*Field, value)) {}
  /// Puts the outer value back.
  ~ContextScope() { thread_context.*Field = saved_; }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  T saved_;
};

}  // namespace detail
}  // namespace pollux
