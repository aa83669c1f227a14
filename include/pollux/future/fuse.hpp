// fuse(f): a future that may be polled again after it was Ready: it then
// answers Pending for good, without polling f (which it destroyed when f
// finished). is_terminated() tells whether it finished. This makes a select
// over long-lived branches loopable: keep `auto line = fuse(next(lines));`
// and `auto tick = fuse(sleep(d));` outside the loop, select over
// by_ref(line) and by_ref(tick), and replace only the branch that won
// (futures-rs's FusedFuture and select!). Pipe form: `f | fuse()`, for
// futures and streams.
// A terminated Fuse stores no waker: it is never going to be Ready, as
// pending_future<T>() never is.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/core/future.hpp"
#include "pollux/core/pipe.hpp"

namespace pollux {

/// The future fuse(f) returns.
template <Future F>
class [[nodiscard("futures do nothing unless polled")]] Fuse {
 public:
  using Output = output_t<F>;

  /// What fuse(f) wraps around `future`.
  explicit Fuse(F future) : future_(std::in_place, std::move(future)) {}

  /// The inner future's poll until it is Ready; from then on Pending, without polling it again.
  Poll<Output> poll(Context & cx) {
    if (!future_) return pending;
    Poll<Output> out = future_->poll(cx);
    if (out.is_ready()) future_.reset();
    return out;
  }

  /// True once the future was Ready (or was never given one: see terminated()).
  bool is_terminated() const noexcept { return !future_; }

  /// A Fuse that is already terminated: a select branch that is off until
  /// it is assigned a running Fuse.
  static Fuse terminated() noexcept { return Fuse(); }

 private:
  Fuse() = default;
  std::optional<F> future_;  // empty: terminated
};

/// `future`, safe to poll after it was Ready.
template <Future F>
Fuse<F> fuse(F future) {
  return Fuse<F>(std::move(future));
}

/// The right-hand side of `f | fuse()` and `s | fuse()`.
struct FuseAdaptor : PipeAdaptor {};

/// `f | fuse()`.
inline FuseAdaptor fuse() noexcept { return {}; }

/// `f | fuse()`.
template <Future F>
Fuse<F> pipe_into(F future, FuseAdaptor) {
  return Fuse<F>(std::move(future));
}

}  // namespace pollux
