// abortable(f): f made abortable from anywhere. Returns the future and an
// AbortHandle; handle.abort(), from any thread, wakes the future, which
// then ends with Aborted without polling f again (and destroys f on that
// poll, on the polling thread). Otherwise it ends with f's output. Its
// output is Result<T, Aborted> (Unit for a void f). One allocation, the
// state shared with the handle; none per poll or abort (futures-rs's
// Abortable).
// Rule 6 and 2: abort() publishes the flag, then wakes the waker that the
// future registered before it last checked the flag, so an abort that
// races a poll is never lost.
// Cancellation: destroying it destroys f; the handle then does nothing.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/core/atomic_waker.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/core/result.hpp"

namespace pollux {

/// The error of an aborted future.
struct Aborted {
  friend bool operator==(Aborted, Aborted) noexcept = default;
};

namespace detail {
struct AbortState : RefCounted<AbortState> {
  pollux::detail::Atomic<bool> aborted{false};
  AtomicWaker waker;
};
}  // namespace detail

/// Aborts the future abortable() made with it; copyable, usable from any
/// thread.
class AbortHandle {
 public:
  /// What abortable(f) makes: the handle that aborts the future sharing `state`.
  explicit AbortHandle(Arc<detail::AbortState> state) noexcept : state_(std::move(state)) {}

  /// Ends the future with Aborted at its next poll (and wakes it for that).
  /// Does nothing to a future that already finished.
  void abort() const noexcept {
    state_->aborted.store(true, std::memory_order_release);
    state_->waker.wake_by_ref();
  }

  /// Whether abort() was called.
  bool is_aborted() const noexcept { return state_->aborted.load(std::memory_order_acquire); }

 private:
  Arc<detail::AbortState> state_;
};

/// The future abortable(f) returns.
template <Future F>
class [[nodiscard("futures do nothing unless polled")]] Abortable {
 public:
  using Output = Result<unit_if_void_t<output_t<F>>, Aborted>;

  /// What abortable(f) makes: `future`, stoppable through the handle that shares `state`.
  Abortable(F future, Arc<detail::AbortState> state)
      : future_(std::in_place, std::move(future)), state_(std::move(state)) {}
  ~Abortable() {
    if (state_) state_->waker.take();  // no waker of ours stays behind (rule 5)
  }
  /// Movable until its first poll (rule 4).
  Abortable(Abortable &&) noexcept = default;
  Abortable& operator=(Abortable&&) = delete;

  /// Polls the inner future unless abort() came first: its output, or Aborted.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Abortable, future_.has_value());
    if (aborted()) return finish(Aborted{});
    auto out = poll_unit(*future_, cx);
    if (out.is_ready()) return finish(std::move(out).value());
    // Register, then look again: an abort after this look wakes us.
    state_->waker.register_waker(cx.waker());
    if (aborted()) return finish(Aborted{});
    return pending;
  }

  /// Whether the handle asked for an abort.
  bool is_aborted() const noexcept { return aborted(); }

 private:
  bool aborted() const noexcept { return state_->aborted.load(std::memory_order_acquire); }

  Poll<Output> finish(Output out) {
    future_.reset();
    return Poll<Output>(std::in_place, std::move(out));
  }

  std::optional<F> future_;  // empty once Ready
  Arc<detail::AbortState> state_;
};

/// `future`, with a handle that can abort it.
template <Future F>
std::pair<Abortable<F>, AbortHandle> abortable(F future) {
  auto state = make_arc<detail::AbortState>();
  AbortHandle handle(state);
  return {Abortable<F>(std::move(future), std::move(state)), std::move(handle)};
}

}  // namespace pollux
