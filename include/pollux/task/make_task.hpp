// make_task(future, schedule): the building block of every executor in
// pollux, public so that a user can write their own in a page.
//
//   auto [runnable, handle] = pollux::make_task(std::move(fut), schedule);
//
// `schedule(Runnable)` is called each time the task is woken (at most once
// until it runs again); the executor queues the Runnable and later calls
// run(), which polls once. The returned Runnable is the first one: queue it.
//
// One allocation per task: the 64-byte header, the dump's metadata, the
// schedule function, and one slot that holds the future and then, in the
// same bytes, its output. It comes from the calling thread's slab
// (SlabAllocator), or from an allocator the caller passes. No allocation
// per wake or per poll.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <string_view>
#include <utility>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/task/detail/task_context.hpp"
#include "pollux/core/future.hpp"
#include "pollux/task/detail/header.hpp"
#include "pollux/task/detail/task_waker.hpp"
#include "pollux/task/join_handle.hpp"
#include "pollux/task/lost_wake.hpp"
#include "pollux/task/runnable.hpp"
#include "pollux/core/slab.hpp"
#include "pollux/task/unhandled_exception.hpp"

namespace pollux {

namespace detail {

/// Task ids: unique per process, handed out in blocks so that a spawn does
/// not touch a shared counter.
inline std::uint64_t next_task_id() noexcept {
  static pollux::detail::Atomic<std::uint64_t> next_block{1};
  constexpr std::uint64_t kBlock = 1024;
  std::uint64_t& next = task_context().next_task_id;
  std::uint64_t& end = task_context().task_id_end;
  if (next == end) {
    next = next_block.fetch_add(kBlock, std::memory_order_relaxed);
    end = next + kBlock;
  }
  return next++;
}

template <class F, class S, class A>
struct TaskAllocation {
  using T = output_t<F>;
  using Output = TaskOutput<T>;
  using Allocator = typename std::allocator_traits<A>::template rebind_alloc<TaskAllocation>;
  using AllocatorTraits = std::allocator_traits<Allocator>;

  TaskPrefix prefix;
  S schedule_fn;
  [[no_unique_address]] Allocator allocator;
  union Stage {
    Stage() noexcept {}
    ~Stage() {}
    F future;
    Output output;
  } stage;

  TaskAllocation(F&& future, S&& schedule, const Allocator& alloc, std::string_view name, std::uint64_t refs,
                 bool registered, bool handle)
      : prefix(&vtable, refs, registered, next_task_id(), handle), schedule_fn(std::move(schedule)), allocator(alloc) {
    std::construct_at(&stage.future, std::move(future));
    prefix.meta.set_name(name);
  }

  static TaskAllocation* self(TaskHeader* task) noexcept { return reinterpret_cast<TaskAllocation*>(task); }

  static void schedule(TaskHeader* task) {
    self(task)->prefix.stats.on_queued();
    self(task)->schedule_fn(Runnable::adopt(task));
  }

  // Rule 7: an exception, from the future's poll or from moving its output
  // into place, is kept for whoever awaits the JoinHandle. The future is
  // destroyed exactly once either way.
  static bool poll(TaskHeader* task, Context& cx) noexcept {
    // Only the runner writes the count; a dump reads it.
    auto& polls = self(task)->prefix.meta.polls;
    polls.store(polls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    auto& stats = self(task)->prefix.stats;
    struct Timed {  // the poll's time, however it ends
      TaskStatsSlot& stats;
      std::uint64_t began = stats.on_poll_begin();
      ~Timed() { stats.on_poll_end(began); }
    } timed{stats};
    Stage& stage = self(task)->stage;
    std::exception_ptr error;
    auto result = [&]() -> Poll<unit_if_void_t<T>> {  // built in place: outputs need not be assignable
      try {
        return poll_unit(stage.future, cx);
      } catch (...) {
        error = std::current_exception();
        return pending;
      }
    }();
    if (error) {
      std::destroy_at(&stage.future);
      std::construct_at(&stage.output, std::in_place_index<1>, std::move(error));
      return true;
    }
    if (result.is_pending()) return false;
    std::destroy_at(&stage.future);
    try {
      std::construct_at(&stage.output, std::in_place_index<0>, std::move(result).value());
    } catch (...) {
      std::construct_at(&stage.output, std::in_place_index<1>, std::current_exception());
    }
    return true;
  }

  static void drop_future(TaskHeader* task) noexcept { std::destroy_at(&self(task)->stage.future); }
  static void drop_output(TaskHeader* task) noexcept { std::destroy_at(&self(task)->stage.output); }
  // Nobody took the output: an exception in it goes to the schedule
  // function's policy (unhandled_exception()), or is reported.
  static void drop_detached_output(TaskHeader* task) noexcept {
    TaskAllocation& t = *self(task);
    if (t.stage.output.index() == 1) {
      UnhandledException policy = UnhandledException::Report;
      if constexpr (requires(const S& s) {
                      { s.unhandled_exception() } -> std::convertible_to<UnhandledException>;
                    }) {
        policy = t.schedule_fn.unhandled_exception();
      }
      handle_unhandled_exception(policy, task->id, t.prefix.meta.name(), std::get<1>(t.stage.output));
    }
    drop_output(task);
  }
  static void* output(TaskHeader* task) noexcept { return &self(task)->stage.output; }
  static LostWake lost_wake(TaskHeader* task) noexcept {
    if constexpr (requires(const S& s) {
                    { s.lost_wake() } -> std::convertible_to<LostWake>;
                  }) {
      return self(task)->schedule_fn.lost_wake();
    } else {
      return LostWake::Report;
    }
  }
  static void deallocate(TaskHeader* task) noexcept {
    TaskAllocation* t = self(task);
    Allocator alloc(std::move(t->allocator));
    std::destroy_at(t);
    AllocatorTraits::deallocate(alloc, t, 1);
  }

  // The one allocation of the task; deallocate() undoes it when the last
  // reference goes.
  static TaskAllocation* create(F&& future, S&& schedule, const A& alloc, std::string_view name, std::uint64_t refs,
                                bool registered, bool handle = true) {
    Allocator a(alloc);
    TaskAllocation* t = AllocatorTraits::allocate(a, 1);
    try {
      return ::new (static_cast<void*>(t))
          TaskAllocation(std::move(future), std::move(schedule), a, name, refs, registered, handle);
    } catch (...) {
      AllocatorTraits::deallocate(a, t, 1);
      throw;
    }
  }

  static constexpr TaskVTable vtable{&schedule, &poll,       &drop_future,   &drop_output, &drop_detached_output,
                                     &output,   &deallocate, type_name<F>(), &lost_wake,   kTaskLayout};
};

static_assert(offsetof(TaskPrefix, header) == 0);

/// `registered`: an executor's registry holds a reference too.
template <class F, class S, class A = SlabAllocator<std::byte>>
std::pair<Runnable, JoinHandle<output_t<F>>> make_task_with_refs(F future, S schedule, std::string_view name,
                                                                 bool registered, const A& alloc = A()) {
  auto* task =
      TaskAllocation<F, S, A>::create(std::move(future), std::move(schedule), alloc, name,
                                      kRunnableRef + kJoinHandleRef + (registered ? kRegistryRef : 0), registered);
  TaskHeader* header = &task->prefix.header;
  return {Runnable::adopt(header), JoinHandle<output_t<F>>::adopt(header)};
}

/// A registered task with no JoinHandle: its first Runnable, and a Waker of
/// the task that holds the reference a handle would (a scoped child keeps
/// it, to finish its task once a canceller destroyed its future). The
/// output is dropped when the task ends. `future_out` receives the address
/// of the future inside the task, where it stays until the task ends.
template <class F, class S>
std::pair<Runnable, Waker> make_task_with_waker(F future, S schedule, std::string_view name, F*& future_out) {
  using Allocation = TaskAllocation<F, S, SlabAllocator<std::byte>>;
  auto* task = Allocation::create(std::move(future), std::move(schedule), SlabAllocator<std::byte>(), name,
                                  kRunnableRef + 1 + kRegistryRef, true, false);
  TaskHeader* header = &task->prefix.header;
  future_out = &task->stage.future;
  return {Runnable::adopt(header), Waker::from_raw(RawWaker{header, &task_waker_vtable<TaskHeader>})};
}

}  // namespace detail

/// Builds a task: its first Runnable (queue it) and its JoinHandle. The
/// schedule function must not throw: it runs inside wakes, which are noexcept.
/// If it has `UnhandledException unhandled_exception() const`, that decides
/// what becomes of an exception of the task once detached (else: Report);
/// if it has `LostWake lost_wake() const`, that decides what a debug build
/// does when the task returns Pending with no waker kept (else: Report).
/// `name` is shown by executors' dump(); it is not copied, so
/// pass a string literal or storage that outlives the task.
template <Future F, class S>
requires std::invocable<S&, Runnable> std::pair<Runnable, JoinHandle<output_t<F>>> make_task(
    F future, S schedule, std::string_view name = {}) {
  return detail::make_task_with_refs(std::move(future), std::move(schedule), name, false);
}

/// make_task, with the task's one allocation made by `alloc` (an allocator
/// in the standard sense, rebound to the task's type) instead of the slab.
/// The task keeps a copy, which frees the allocation when the last
/// reference goes, on whichever thread drops it.
template <class A, Future F, class S>
requires std::invocable<S&, Runnable> std::pair<Runnable, JoinHandle<output_t<F>>> make_task(
    std::allocator_arg_t, const A& alloc, F future, S schedule, std::string_view name = {}) {
  return detail::make_task_with_refs(std::move(future), std::move(schedule), name, false, alloc);
}

}  // namespace pollux
