// Critical sections for the single-core profile (POLLUX_SINGLE_CORE): the
// only other "thread" on a microcontroller is an interrupt handler, so a
// section that masks interrupts is atomic with respect to everything else.
// On an M-profile Arm core it saves PRIMASK and sets it; on a host build of
// the profile (its tests) interrupts are calls the test makes itself, so a
// section only counts its depth, for the checks that need one held.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <atomic>
#include <cstdint>

namespace pollux::detail {

#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'

/// Masks interrupts and returns the mask it found (PRIMASK), so that
/// sections nest: the inner one's end restores "masked".
inline std::uint32_t mask_interrupts() noexcept {
  std::uint32_t primask;
  asm volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask)::"memory");
  return primask;
}
/// Puts back the mask that mask_interrupts returned.
inline void restore_interrupts(std::uint32_t primask) noexcept {
  asm volatile("msr primask, %0" ::"r"(primask) : "memory");
}

#else

/// The depth of masked sections on a host build of the profile.
inline constinit std::uint32_t host_interrupt_mask_depth = 0;
/// A host build of the profile has no interrupts to mask: counts the depth.
inline std::uint32_t mask_interrupts() noexcept {
  asm volatile("" ::: "memory");
  return host_interrupt_mask_depth++;
}
/// Ends the section that mask_interrupts began.
inline void restore_interrupts(std::uint32_t) noexcept {
  --host_interrupt_mask_depth;
  asm volatile("" ::: "memory");
}

#endif

/// Masks interrupts for its lifetime; sections nest.
class InterruptGuard {
 public:
  InterruptGuard() noexcept : saved_(mask_interrupts()) {}
  ~InterruptGuard() { restore_interrupts(saved_); }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  std::uint32_t saved_;
};

/// An atomic for a type the core cannot update in one instruction pair
/// (a 64-bit word on a 32-bit core without LDREXD): each operation is a
/// short critical section. The memory orders are accepted and exceed what
/// they ask: a single core sees its own writes in order, and the section's
/// "memory" clobber keeps the compiler from moving accesses across it.
template <class T>
class GuardedAtomic {
 public:
  constexpr GuardedAtomic() noexcept : value_() {}
  constexpr GuardedAtomic(T value) noexcept : value_(value) {}  // NOLINT: implicit, as the standard atomic
  GuardedAtomic(const GuardedAtomic&) = delete;
  GuardedAtomic& operator=(const GuardedAtomic&) = delete;

  T load(std::memory_order = std::memory_order_seq_cst) const noexcept {
    InterruptGuard guard;
    return value_;
  }
  void store(T value, std::memory_order = std::memory_order_seq_cst) noexcept {
    InterruptGuard guard;
    value_ = value;
  }
  T exchange(T value, std::memory_order = std::memory_order_seq_cst) noexcept {
    InterruptGuard guard;
    T old = value_;
    value_ = value;
    return old;
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order = std::memory_order_seq_cst,
                               std::memory_order = std::memory_order_seq_cst) noexcept {
    InterruptGuard guard;
    if (value_ == expected) {
      value_ = desired;
      return true;
    }
    expected = value_;
    return false;
  }
  bool compare_exchange_weak(T& expected, T desired, std::memory_order = std::memory_order_seq_cst,
                             std::memory_order = std::memory_order_seq_cst) noexcept {
    return compare_exchange_strong(expected, desired);
  }
  T fetch_add(T n, std::memory_order = std::memory_order_seq_cst) noexcept {
    return update([n](T v) { return static_cast<T>(v + n); });
  }
  T fetch_sub(T n, std::memory_order = std::memory_order_seq_cst) noexcept {
    return update([n](T v) { return static_cast<T>(v - n); });
  }
  T fetch_or(T n, std::memory_order = std::memory_order_seq_cst) noexcept {
    return update([n](T v) { return static_cast<T>(v | n); });
  }
  T fetch_and(T n, std::memory_order = std::memory_order_seq_cst) noexcept {
    return update([n](T v) { return static_cast<T>(v & n); });
  }
  T fetch_xor(T n, std::memory_order = std::memory_order_seq_cst) noexcept {
    return update([n](T v) { return static_cast<T>(v ^ n); });
  }

 private:
  template <class Op>
  T update(Op op) noexcept {
    InterruptGuard guard;
    T old = value_;
    value_ = op(old);
    return old;
  }

  T value_;
};

}  // namespace pollux::detail
