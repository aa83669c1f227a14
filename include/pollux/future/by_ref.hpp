// by_ref(f): a future that polls a longer-lived future through a reference
// (Rust's `&mut F`). A combinator that owns a ByRef destroys only the
// reference, never f: `select(by_ref(rx), timeout_like)` can lose the race
// and rx still holds its registration and the value it will receive, ready
// to be polled again. f must outlive the ByRef and must not be polled again
// once it returned Ready (rule 3 holds across all the ByRefs that reach it).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/core/future.hpp"

namespace pollux {

/// What by_ref(f) returns: a future that polls a longer-lived future through a reference (Rust's
/// `&mut F`).
template <Future F>
class [[nodiscard("futures do nothing unless polled")]] ByRef {
 public:
  using Output = output_t<F>;

  /// Borrows `future`, which must outlive this.
  explicit ByRef(F & future) noexcept : future_(&future) {}

  /// Polls the borrowed future where it lives; it stays its owner's.
  Poll<Output> poll(Context & cx) { return future_->poll(cx); }

 private:
  F* future_;
};

/// A future that polls `future` through a reference; `future` must outlive it.
template <Future F>
ByRef<F> by_ref(F& future) noexcept {
  return ByRef<F>(future);
}

}  // namespace pollux
