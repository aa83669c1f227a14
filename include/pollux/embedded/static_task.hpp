// StaticTask<F> and TaskPool<F, N>: a task's storage declared by the user
// (a global, a static), so that spawning allocates nothing. The task runs
// the hosted task's state machine (task/detail/state.hpp) through the same
// harness; its storage is free again once its last reference is gone
// (rule 6: a waker dropped late, even in an interrupt, still finds it).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20
#include "pollux/embedded/detail/profile.hpp"

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/embedded/detail/static_header.hpp"

namespace pollux {

/// Storage for one task running a future of type F, declared by the user
/// (`constinit pollux::StaticTask<Blink> blink;` at namespace scope). It
/// holds one task at a time: SingleCoreExecutor::spawn fills it and it is
/// free again once that task has completed and no waker of it is left.
/// F's output is dropped. It must outlive every task it holds (a global).
template <Future F>
class StaticTask {
 public:
  constexpr StaticTask() noexcept {}
  StaticTask(const StaticTask&) = delete;
  StaticTask& operator=(const StaticTask&) = delete;

  /// Whether it holds a task (spawned, and not yet complete with every waker gone).
  bool in_use() const noexcept { return header_.in_use.load(std::memory_order_acquire); }

 private:
  friend class SingleCoreExecutor;

  // Claims the storage for a new task of `future`, queued on `queue`; false
  // while a task is still in it.
  bool start(F&& future, detail::RunQueue& queue) noexcept {
    if (in_use()) return false;
    header_.in_use.store(true, std::memory_order_relaxed);
    std::construct_at(&header_.state, detail::kRunnableRef, false, false);  // a new task: its Runnable, no handle
    header_.vtable = &kVTable;
    header_.queue = &queue;
    header_.run_next = nullptr;
    std::construct_at(stored(), std::move(future));
    return true;
  }

  detail::StaticTaskHeader* header() noexcept { return &header_; }
  F* stored() noexcept { return std::launder(reinterpret_cast<F*>(future_)); }
  static StaticTask* self(detail::StaticTaskHeader* h) noexcept {
    return reinterpret_cast<StaticTask*>(reinterpret_cast<std::byte*>(h) - offsetof(StaticTask, header_));
  }

  static void schedule(detail::StaticTaskHeader* h) { h->queue->push(h); }
  static bool poll(detail::StaticTaskHeader* h, Context& cx) noexcept {
    F& future = *self(h)->stored();
    if (future.poll(cx).is_pending()) return false;
    std::destroy_at(&future);  // the output, if any, went with the poll's result
    return true;
  }
  static void drop_future(detail::StaticTaskHeader* h) noexcept { std::destroy_at(self(h)->stored()); }
  static void drop_output(detail::StaticTaskHeader*) noexcept {}
  static void* output(detail::StaticTaskHeader*) noexcept { return nullptr; }
  // The last reference is gone: the storage is free for the next spawn.
  static void release(detail::StaticTaskHeader* h) noexcept { h->in_use.store(false, std::memory_order_release); }
  static LostWake lost_wake(detail::StaticTaskHeader*) noexcept { return LostWake::Terminate; }

  static constexpr detail::StaticTaskVTable kVTable{&schedule,    &poll,   &drop_future, &drop_output,
                                                    &drop_output, &output, &release,     detail::type_name<F>(),
                                                    &lost_wake};

  detail::StaticTaskHeader header_;
  alignas(F) std::byte future_[sizeof(F)]{};
};

/// N slots for tasks running futures of type F, as embassy's
/// `#[task(pool_size = N)]`: spawning takes a free slot, and returns
/// false when all N hold a task.
template <Future F, std::size_t N>
class TaskPool {
  static_assert(N > 0, "a TaskPool needs at least one slot");

 public:
  constexpr TaskPool() noexcept = default;
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  /// The slots that hold a task now.
  std::size_t in_use() const noexcept {
    std::size_t n = 0;
    for (const auto& slot : slots_) n += slot.in_use() ? 1 : 0;
    return n;
  }

 private:
  friend class SingleCoreExecutor;

  StaticTask<F> slots_[N];
};

}  // namespace pollux
