// pending_future<T>(): a future that is never ready. It stores no waker:
// nothing will ever make progress possible, so there is no one to wake
// (the one leaf for which rule 2 asks nothing, so it tells the debug
// checker of rule 2 that keeping no waker is deliberate).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/thread_context.hpp"
#include "pollux/core/future.hpp"

namespace pollux {

/// A future of T that is Pending forever; destroying it is the only way out.
template <class T>
class [[nodiscard("futures do nothing unless polled")]] PendingFuture {
 public:
  using Output = T;

  /// Always Pending: never Ready, and never wakes anyone.
  Poll<T> poll(Context&) noexcept {
    if constexpr (detail::check_contract) detail::core_context().pending_on_purpose = true;
    return pending;
  }
};

/// A future that never completes: for a branch of a select that must never
/// win, or a task that only ends when it is aborted.
template <class T = void>
PendingFuture<T> pending_future() noexcept {
  return {};
}

}  // namespace pollux
