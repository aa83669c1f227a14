// RingCompletions: a driver's census of its workers' io_uring rings, so
// that its metrics can add up the completions each ring counts on its own
// thread. A ring joins when its worker makes it and leaves, its count kept,
// when the worker ends it; the lock is taken only then and by metrics().
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <algorithm>
#include <cstdint>
#include <vector>

#include "pollux/core/detail/concurrency.hpp"

namespace pollux::detail {

class Ring;

class RingCompletions {
 public:
  void join(const Ring* ring) {
    MutexLock lock(mutex_);
    rings_.push_back(ring);
  }
  // `completions`: the ring's final count. After this the ring may go.
  void leave(const Ring* ring, std::uint64_t completions) noexcept {
    MutexLock lock(mutex_);
    auto it = std::find(rings_.begin(), rings_.end(), ring);
    if (it == rings_.end()) return;
    rings_.erase(it);
    left_ += completions;
  }
  // The completions of every ring that joined (src/driver/driver.cpp).
  std::uint64_t total() const;

 private:
  mutable Mutex mutex_;
  std::vector<const Ring*> rings_ POLLUX_GUARDED_BY(mutex_);
  std::uint64_t left_ POLLUX_GUARDED_BY(mutex_) = 0;  // what the rings that left had counted
};

}  // namespace pollux::detail
