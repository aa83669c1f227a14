// pending_future<T>(): a future that is never ready. It stores no waker:
// nothing will ever make progress possible, so there is no one to wake
// (the one leaf for which rule 2 asks nothing).
#pragma once

#include "pollux/core/future.hpp"

namespace pollux {

template <class T>
class PendingFuture {
 public:
  using Output = T;

  Poll<T> poll(Context&) noexcept { return pending; }
};

template <class T = void>
PendingFuture<T> pending_future() noexcept {
  return {};
}

}  // namespace pollux
