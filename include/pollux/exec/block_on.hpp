// block_on(f): drives f to completion on the calling thread and returns its
// output (or rethrows its exception, rule 7). While f is Pending the thread
// parks and uses no CPU; f's waker unparks it from any thread (rule 6).
// f lives in block_on's frame from its first poll to its end, so it never
// moves after a poll (rule 4). Debug builds stop with a message when f
// returns Pending and no clone of block_on's waker exists anywhere and no
// wake is pending: nothing can ever wake the thread (rule 2).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/exec/detail/exec_context.hpp"
#include "pollux/core/detail/diagnose.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/exec/parker.hpp"

namespace pollux {

namespace detail {
/// Marks the thread as polling on its parker for the duration of a block_on.
/// Nested block_on calls share the thread's parker; an inner call may consume
/// a wake meant for an outer future, so leaving an inner call leaves a token
/// behind (a spurious wake for the outer one, never a lost one).
class BlockOnScope {
 public:
  BlockOnScope() noexcept
      : parker_(Parker::current()), outer_(std::exchange(exec_context().polling_parker, parker_.get())) {}
  ~BlockOnScope() {
    exec_context().polling_parker = outer_;
    if (outer_ != nullptr) parker_->unpark();
  }
  BlockOnScope(const BlockOnScope&) = delete;
  BlockOnScope& operator=(const BlockOnScope&) = delete;

  Parker& parker() const noexcept { return *parker_; }
  Waker waker() const noexcept { return waker_from(parker_); }

 private:
  const Arc<Parker>& parker_;
  Parker* outer_;
};
}  // namespace detail

/// Not a future, given to block_on: a compile error that says what it is.
template <class F>
requires(!Future<F>) detail::Misused block_on(F) {
  detail::not_a_future<F>();
  return {};
}

/// Runs `future` to completion on the calling thread, parking it while the
/// future is Pending; returns the output or rethrows the exception.
template <Future F>
output_t<F> block_on(F future) {
  detail::BlockOnScope scope;
  const Waker waker = scope.waker();
  Context cx(waker);
  for (;;) {
    detail::PendingOnPurposeScope purpose;
    auto result = future.poll(cx);
    if (result.is_ready()) return std::move(result).value();  // also for Poll<void>
    // Woken by itself or a sibling during that poll: poll again at once.
    if (scope.parker().take_wake_during_poll()) continue;
    if constexpr (detail::check_contract) {
      // Two references are block_on's own: the thread's and `waker`. With
      // no other, no clone of the waker exists; read before the token, so a
      // wake followed by its drop elsewhere is seen as the token.
      if (!purpose.set() && scope.parker().use_count() == 2 && !scope.parker().notified()) {
        detail::kept_no_waker_in_block_on<F>();
      }
    }
    scope.parker().park();
  }
}

}  // namespace pollux
