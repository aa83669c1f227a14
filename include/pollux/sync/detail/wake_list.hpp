// WakeList: wakers collected under a primitive's lock and woken after it
// is released, so that no waker (which may run an executor's schedule
// code, or take another lock) is ever called while the wait list is held.
// A fixed array whose slots are constructed as wakers are pushed:
// collecting and waking allocate nothing, and an empty list costs nothing
// to make or destroy. A primitive that
// may have more waiters to wake than fit releases its lock, wakes the
// batch and takes the lock again.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/waker.hpp"

namespace pollux::detail {

class WakeList {
 public:
  static constexpr std::size_t kCapacity = 32;

  WakeList() = default;
  WakeList(const WakeList&) = delete;
  WakeList& operator=(const WakeList&) = delete;
  ~WakeList() { wake_all(); }

  bool can_push() const noexcept { return size_ < kCapacity; }
  /// When the list is full: lets `held` go, wakes the batch and takes the
  /// lock again, then returns true (the caller looks at its list anew).
  bool flush_if_full(Mutex& held) noexcept POLLUX_REQUIRES(held) {
    if (can_push()) return false;
    held.unlock();
    wake_all();
    held.lock();
    return true;
  }
  void push(Waker&& waker) noexcept { std::construct_at(slot(size_++), std::move(waker)); }

  /// Wakes and drops every collected waker. Call it with no lock held.
  void wake_all() noexcept {
    std::size_t n = std::exchange(size_, 0);
    for (std::size_t i = 0; i < n; ++i) {
      std::move(*slot(i)).wake();
      std::destroy_at(slot(i));
    }
  }

 private:
  Waker* slot(std::size_t i) noexcept { return std::launder(reinterpret_cast<Waker*>(storage_ + i * sizeof(Waker))); }

  alignas(Waker) unsigned char storage_[kCapacity * sizeof(Waker)];
  std::size_t size_ = 0;
};

}  // namespace pollux::detail
