// The cooperative budget (tokio's coop): an executor gives each poll of a
// task a budget; leaf futures that find work ready spend one unit per ready
// answer, and once it is gone they return Pending after waking their task
// (rule 2 holds: the self-wake is the arrangement). A task that keeps
// finding work ready (a FuturesUnordered full of ready children, a channel
// that never empties) thus yields after a bounded number of steps, and the
// other tasks on its thread still run. Outside an executor (block_on, a
// test's manual poll) the budget is unlimited.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/core/context.hpp"
#include "pollux/core/detail/thread_context.hpp"

namespace pollux::coop {

/// How many units of work a task may do in one poll before the coop-aware
/// futures it polls answer Pending (tokio's 128).
inline constexpr int kBudgetPerPoll = 128;

/// Gives the current thread a fresh budget for one task poll; restores the
/// previous one when it ends (polls may nest: block_on inside a task).
class BudgetScope {
 public:
  /// Gives this thread `budget` units until the scope ends.
  explicit BudgetScope(int budget = kBudgetPerPoll) noexcept : scope_(budget) {}

 private:
  detail::ContextScope<&detail::CoreThreadContext::coop_budget> scope_;
};

/// Gives the current thread a fresh budget for the next task poll. For an
/// executor's loop, inside a BudgetScope that it holds around a batch of
/// polls: the outer budget is then saved and restored once per batch.
inline void refill(int budget = kBudgetPerPoll) noexcept { detail::core_context().coop_budget = budget; }

/// Spends one unit. Returns false when the budget is spent, after waking the
/// task, so the caller returns Pending and is polled again after others ran.
inline bool poll_proceed(Context& cx) noexcept {
  int& budget = detail::core_context().coop_budget;
  if (budget == 0) {
    cx.waker().wake_by_ref();
    return false;
  }
  if (budget > 0) --budget;
  return true;
}

/// What is left of the current budget (-1: unlimited). For tests and dumps.
inline int remaining() noexcept { return detail::core_context().coop_budget; }

}  // namespace pollux::coop
