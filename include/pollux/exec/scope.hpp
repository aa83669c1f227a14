// Scope: structured concurrency whose children may borrow. pollux::scope(fn)
// is a future; fn(scope) makes its body, and scope.spawn(f) runs f as a task
// on the current executor (in parallel on a ThreadPool), where f may hold
// references into whatever owns the scope's future. The future ends only
// once every child has ended; the first child that throws cancels the
// others by destruction, and its exception comes out of the scope.
//
// Borrowing is sound because of rule 5, checked at run time: destroying the
// scope's future destroys every child before it returns, on this thread
// for a child that waits, after its poll for a child in a poll on another
// worker. That wait is the price: at most one child's poll.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <functional>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/exec/detail/scope_state.hpp"
#include "pollux/exec/detail/scoped_child.hpp"
#include "pollux/exec/scheduler.hpp"
#include "pollux/sync/cancellation_token.hpp"
#include "pollux/task/make_task.hpp"

namespace pollux {

template <class Fn>
class ScopeFuture;

/// The handle a scope's body and children spawn through. It lives inside
/// the future that pollux::scope returns, and only that future makes one.
class Scope {
 public:
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  /// Runs `future` as a task on the executor of the calling task, as a
  /// child of this scope: it may borrow anything that outlives the scope's
  /// future. Its output must be void; a child fails by throwing, which
  /// cancels its siblings. Returns false, and destroys `future` unpolled,
  /// when the scope is closed (close(), request_stop(), cancel(), or a
  /// failure). Call it from the scope's body or from one of its children
  /// (debug builds check); throws std::logic_error outside any executor.
  template <Future F>
  bool spawn(F future, std::string_view name = {}) {
    static_assert(std::is_void_v<output_t<F>>,
                  "Scope::spawn: a scoped child's output must be void; it writes its result into what it borrows, "
                  "and fails by throwing");
    state_.check_in_use();
    detail::Scheduler* scheduler = detail::exec_context().scheduler;
    if (scheduler == nullptr) {
      throw std::logic_error("pollux::Scope::spawn: called outside any executor; poll the scope inside a task");
    }
    using Child = detail::ScopedChild<F>;
    Child* child = nullptr;
    auto [runnable, task] = detail::make_task_with_waker(
        Child(std::move(future)), detail::SchedulerRef{Arc<detail::Scheduler>(scheduler)}, name, child);
    detail::TaskHeader* header = runnable.header();
    child->task = std::move(task);  // before the link: from then on a claimer may take it
    if (!state_.link(*child)) {
      // Refused: the future is destroyed here, unpolled (dropping the first
      // Runnable cancels the task), and the registry's reference, counted
      // for a bind that will not come, is given back.
      { Waker gone = std::move(child->task); }
      { Runnable dropped = std::move(runnable); }
      detail::task_unregister(header);
      return false;
    }
    scheduler->bind(std::move(runnable));
    return true;
  }

  /// Refuses later spawns; the children already spawned run on.
  void close() noexcept { state_.close(); }

  /// Asks the children to stop, cooperatively: closes the scope and
  /// cancels token(). Children that watch the token end early; the scope's
  /// future still waits for each to end.
  void request_stop() {
    state_.close();
    token_.cancel();
  }

  /// A token that request_stop() cancels, for children to watch
  /// (token().cancelled() is a future).
  CancellationToken token() const { return token_; }

  /// Closes the scope and cancels every child by destruction: one that
  /// waits is destroyed here, one in a poll on another worker when that
  /// poll ends. The scope's future then completes normally.
  void cancel() noexcept { state_.cancel_all(); }

  /// Whether request_stop() was called.
  bool stop_requested() const { return token_.is_cancelled(); }

  /// Whether spawn() is refused: after close(), request_stop(), cancel(), or a child's failure.
  bool is_closed() const noexcept { return state_.closed(); }

  /// The children that have not ended yet.
  std::size_t size() const noexcept { return state_.live(); }

 private:
  template <class Fn>
  friend class ScopeFuture;

  Scope() = default;

  detail::ScopeState state_;
  CancellationToken token_;
};

/// The future of pollux::scope(fn): fn's body, then every child, then the
/// body's output (or the first failure, rethrown).
template <class Fn>
class [[nodiscard("futures do nothing unless polled")]] ScopeFuture {
  using Body = std::invoke_result_t<Fn&, Scope&>;
  using T = output_t<Body>;

 public:
  /// The body's output.
  using Output = T;

  /// What pollux::scope(fn) makes.
  explicit ScopeFuture(Fn fn) : fn_(std::move(fn)) {}
  /// Only before the first poll (rule 4): children hold the scope's address.
  ScopeFuture(ScopeFuture && other) : fn_(std::move(other.fn_)) {
    if (other.state_ != State::Start) {
      detail::contract_violation_text("a pollux::scope future was moved after its first poll (rule 4)");
    }
  }
  ScopeFuture& operator=(ScopeFuture&&) = delete;

  /// Destroys every child first (waiting out a poll in flight on another
  /// worker), then the body, then fn, so that nothing a child borrows from
  /// them goes away while the child exists.
  ~ScopeFuture() {
    if (state_ != State::Start) scope_.state_.drain();
    body_.reset();
  }

  /// Polls the body until it is Ready, then waits for the children.
  Poll<T> poll(Context & cx) {
    switch (state_) {
      case State::Start:
        state_ = State::Body;
        try {
          detail::ScopeFrameGuard frame(&scope_.state_, false);
          body_.emplace(std::invoke(fn_, scope_));
        } catch (...) {
          scope_.state_.fail(std::current_exception());
        }
        [[fallthrough]];
      case State::Body:
        if (!poll_body(cx)) return pending;
        state_ = State::Draining;
        [[fallthrough]];
      case State::Draining:
        if (!scope_.state_.park(cx.waker(), true)) return pending;
        state_ = State::Done;
        if (std::exception_ptr failure = scope_.state_.take_failure()) std::rethrow_exception(failure);
        if constexpr (std::is_void_v<T>) {
          return ready();
        } else {
          return Poll<T>(std::in_place, std::move(*output_));
        }
      case State::Done:
        break;
    }
    detail::contract_violation_text("a pollux::scope future was polled after it completed (rule 3)");
  }

 private:
  enum class State { Start, Body, Draining, Done };

  // True once the body is done with: Ready (its output kept), threw, or
  // destroyed because a child failed.
  bool poll_body(Context & cx) {
    if (body_ && !scope_.state_.failed()) {
      try {
        detail::ScopeFrameGuard frame(&scope_.state_, false);
        auto polled = poll_unit(*body_, cx);
        if (polled.is_pending()) {
          if (!scope_.state_.park(cx.waker(), false)) return false;
        } else if constexpr (!std::is_void_v<T>) {
          output_.emplace(std::move(polled).value());
        }
      } catch (...) {
        scope_.state_.fail(std::current_exception());
      }
    }
    body_.reset();
    return true;
  }

  State state_ = State::Start;
  Fn fn_;
  Scope scope_;
  std::optional<Body> body_;
  std::optional<std::conditional_t<std::is_void_v<T>, char, T>> output_;
};

/// A scope: `fn(scope)` makes the body, a future that may spawn children
/// through `scope`. The result completes with the body's output once the
/// body and every child have ended; the first exception of a child or the
/// body cancels the rest by destruction and is rethrown once they are gone.
template <class Fn>
requires std::invocable<Fn&, Scope&> && Future<std::invoke_result_t<Fn&, Scope&>> ScopeFuture<Fn> scope(Fn fn) {
  return ScopeFuture<Fn>(std::move(fn));
}

}  // namespace pollux
