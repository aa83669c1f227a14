// ScopedChild<F>: the future of a scoped child's task, wrapping the user's
// future F. Its ScopeCell decides who destroys F: the task's worker after
// F is Ready, throws or is asked to stop, or a canceller on its own thread.
// Either way the scope learns of the end through child_ended or its own
// claim, and the task ends with the first poll that finds F gone.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <exception>
#include <optional>
#include <utility>

#include "pollux/core/future.hpp"
#include "pollux/exec/detail/scope_state.hpp"

namespace pollux::detail {

/// A scoped child's task future: F, and the part the scope sees.
template <Future F>
class ScopedChild : public ScopeChild {
 public:
  using Output = void;

  explicit ScopedChild(F future) : future_(std::move(future)) { destroy = &destroy_future; }
  /// Only before the child is linked (spawn moves it into its task).
  ScopedChild(ScopedChild&& other) noexcept(std::is_nothrow_move_constructible_v<F>)
      : future_(std::move(other.future_)) {
    assert(other.scope == nullptr && "a ScopedChild moved after it was linked");
    destroy = &destroy_future;
  }
  ScopedChild& operator=(ScopedChild&&) = delete;
  // The task dropped unfinished (its executor shut down, or its spawn was
  // refused): F is destroyed here, or by the canceller that owns it.
  ~ScopedChild() {
    if (scope != nullptr && cell.phase() != ScopeCell::kGone) [[unlikely]]
      ScopeState::child_dropped(*this);
  }

  /// Polls F once, unless a canceller took it; Ready once F is gone.
  Poll<void> poll(Context& cx) {
    switch (cell.begin_poll()) {
      case ScopeCell::kGone:
        return ready();
      case ScopeCell::kClaimed:
        return pending;  // the claimer wakes this task once F is gone
      default:
        break;
    }
    std::exception_ptr error;
    bool finished;
    {
      ScopeFrameGuard frame(scope, true);
      try {
        finished = future_->poll(cx).is_ready();
      } catch (...) {
        error = std::current_exception();
        finished = true;
      }
    }
    if (!finished && cell.end_poll()) return pending;
    future_.reset();  // Ready, threw, or a cancel came during the poll
    if (error) [[unlikely]] {
      scope->child_failed(*this, std::move(error));
    } else {
      scope->child_ended(*this);  // kGone, under the scope's lock
    }
    return ready();
  }

 private:
  static void destroy_future(ScopeChild* self) noexcept { static_cast<ScopedChild*>(self)->future_.reset(); }

  std::optional<F> future_;
};

}  // namespace pollux::detail
