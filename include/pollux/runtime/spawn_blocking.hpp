// spawn_blocking(fn): runs fn on the runtime's BlockingPool and returns a
// future of its result, Result<T, Cancelled> as a JoinHandle's (Cancelled
// when the pool shut down before fn ran); an exception fn throws is
// rethrown by the future.
// One allocation per call (the job, which holds fn, the result and the
// waker slot). The future registers its waker in an AtomicWaker and the
// pool thread wakes it after publishing the result, so no wake is lost.
// Destroying the future does not stop fn (a running function cannot be
// interrupted); its result is dropped.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstdint>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "pollux/core/atomic_waker.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/result.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/runtime/blocking_pool.hpp"
#include "pollux/task/cancelled.hpp"
#include "pollux/task/make_task.hpp"
#include "pollux/core/no_runtime.hpp"

namespace pollux {

namespace detail {

template <class T>
class BlockingState : public BlockingJob {
 public:
  enum class Stage : std::uint8_t { Queued, Done, Cancelled };

  pollux::detail::Atomic<Stage> stage{Stage::Queued};
  AtomicWaker waker;
  std::optional<unit_if_void_t<T>> value;  // written before stage becomes Done
  std::exception_ptr error;
  std::uint64_t id = next_task_id();

  void cancel() noexcept override { finish(Stage::Cancelled); }

 protected:
  void finish(Stage how) noexcept {
    stage.store(how, std::memory_order_release);
    waker.wake_by_ref();
  }
};

template <class Fn, class T = std::invoke_result_t<Fn&>>
class BlockingTask final : public BlockingState<T> {
 public:
  explicit BlockingTask(Fn fn) : fn_(std::move(fn)) {}

  void run() noexcept override {
    try {
      if constexpr (std::is_void_v<T>) {
        std::invoke(*fn_);
        this->value.emplace();
      } else {
        this->value.emplace(std::invoke(*fn_));
      }
    } catch (...) {
      this->error = std::current_exception();
    }
    fn_.reset();  // what fn captured goes now, on the pool thread
    this->finish(BlockingState<T>::Stage::Done);
  }

 private:
  std::optional<Fn> fn_;
};

}  // namespace detail

/// What spawn_blocking(fn) returns: a future of fn's result, or Cancelled when the pool shut
/// down before fn ran.
template <class T>
class BlockingHandle {
 public:
  /// fn's result, or Cancelled.
  using Output = Result<T, Cancelled>;

  /// What spawn_blocking() makes.
  explicit BlockingHandle(Arc<detail::BlockingState<T>> state) noexcept : state_(std::move(state)) {}
  BlockingHandle(BlockingHandle&&) noexcept = default;
  BlockingHandle& operator=(BlockingHandle&&) = delete;
  /// Destroyed before it completed: the function still runs (it cannot be
  /// stopped), but the waker goes now, not when the pool thread lets go of
  /// the shared state (rule 5).
  ~BlockingHandle() {
    if (state_) (void)state_->waker.take();
  }

  /// Lets go of the waker the last Pending stored, for an owner that keeps
  /// this handle after the future that polled it went away (rule 5).
  void forget_waker() noexcept {
    if (state_) (void)state_->waker.take();
  }

  /// Ready with the function's result once a blocking thread ran it (its exception rethrown), or
  /// with Cancelled once the pool dropped it unrun.
  Poll<Output> poll(Context& cx) {
    POLLUX_CHECK_NOT_DONE(BlockingHandle, state_ != nullptr);
    using Stage = typename detail::BlockingState<T>::Stage;
    Stage stage = state_->stage.load(std::memory_order_acquire);
    if (stage == Stage::Queued) {
      state_->waker.register_waker(cx.waker());
      stage = state_->stage.load(std::memory_order_acquire);  // finished while we registered?
      if (stage == Stage::Queued) return pending;
    }
    Arc<detail::BlockingState<T>> state = std::move(state_);
    (void)state->waker.take();  // the pool thread may hold the state a while longer
    if (stage == Stage::Cancelled) return Poll<Output>(std::in_place, Cancelled{state->id});
    // Taken out of the shared state, so the exception is destroyed on this
    // thread, not on the pool thread that may drop the state last.
    if (std::exception_ptr error = std::move(state->error)) std::rethrow_exception(error);
    if constexpr (std::is_void_v<T>) {
      return Poll<Output>(std::in_place);
    } else {
      return Poll<Output>(std::in_place, std::move(*state->value));
    }
  }

 private:
  Arc<detail::BlockingState<T>> state_;
};

/// Runs fn on `pool`: for a pool of one's own, outside any runtime.
template <class Fn>
BlockingHandle<std::invoke_result_t<std::decay_t<Fn>&>> spawn_blocking_on(BlockingPool& pool, Fn&& fn) {
  using T = std::invoke_result_t<std::decay_t<Fn>&>;
  auto task = make_arc<detail::BlockingTask<std::decay_t<Fn>>>(std::forward<Fn>(fn));
  Arc<detail::BlockingState<T>> state = task;
  pool.submit(std::move(task));
  return BlockingHandle<T>(std::move(state));
}

/// Runs fn on the current runtime's pool. Throws NoRuntime outside a
/// runtime (its block_on, its tasks, or a scope of Runtime::enter()), and
/// std::system_error when the pool has no thread and cannot start one: then
/// fn never runs, so a caller may retry without running it twice.
template <class Fn>
BlockingHandle<std::invoke_result_t<std::decay_t<Fn>&>> spawn_blocking(Fn&& fn) {
  BlockingPool* pool = detail::runtime_context().blocking_pool;
  if (pool == nullptr) {
    throw NoRuntime(
        "pollux::spawn_blocking: called outside a runtime; call it inside Runtime::block_on, a task spawned on a "
        "Runtime, or a scope of Runtime::enter()");
  }
  return spawn_blocking_on(*pool, std::forward<Fn>(fn));
}

}  // namespace pollux
