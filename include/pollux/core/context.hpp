// Context: what a poll is given. Today it carries the waker of the task
// being polled; a future that returns Pending stores (a clone of) that
// waker, replacing any older one (contract rule 2).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/core/waker.hpp"

namespace pollux {

/// What a poll is given.
class Context {
 public:
  /// A context over `waker`, which must outlive it.
  explicit Context(const Waker& waker) noexcept : waker_(&waker) {}

  /// The waker of this poll: clone it (or will_wake-compare it) to be woken later (rule 2).
  const Waker& waker() const noexcept { return *waker_; }

 private:
  const Waker* waker_;
};

}  // namespace pollux
