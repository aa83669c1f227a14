// Context: what a poll is given. Today it carries the waker of the task
// being polled; a future that returns Pending stores (a clone of) that
// waker, replacing any older one (contract rule 2).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/core/waker.hpp"

namespace pollux {

class Context {
 public:
  explicit Context(const Waker& waker) noexcept : waker_(&waker) {}

  const Waker& waker() const noexcept { return *waker_; }

 private:
  const Waker* waker_;
};

}  // namespace pollux
