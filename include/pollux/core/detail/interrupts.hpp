// Critical sections for the single-core profile (POLLUX_SINGLE_CORE): the
// only other "thread" on a microcontroller is an interrupt handler, so a
// section that masks interrupts is atomic with respect to everything else.
// On an M-profile Arm core it saves PRIMASK and sets it; on a host build of
// the profile (its tests) interrupts are calls the test makes itself, so a
// section only counts its depth; in the model checker's build it takes a
// model mutex that a simulated interrupt's handler takes too.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <atomic>
#include <cstdint>

#if defined(POLLUX_MODEL) && !(defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M')
#include <model.hpp>  // the model builds put tests/support/ on the include path
#endif

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

/// Whether the core runs an exception handler now (IPSR holds its number).
inline bool in_interrupt_handler() noexcept {
  std::uint32_t ipsr;
  asm volatile("mrs %0, ipsr" : "=r"(ipsr));
  return ipsr != 0;
}

#elif defined(POLLUX_MODEL)

// The model checker's build of the profile (tests/model/model_single_core.cpp):
// masking takes one model mutex, which the simulated interrupt's handler
// takes too, so the checker tries an interrupt at every point where the
// code runs unmasked. Sections nest by a depth count per model thread.
inline ::model::Mutex& interrupt_mask() noexcept {
  static ::model::Mutex mask;
  return mask;
}
inline thread_local std::uint32_t model_mask_depth = 0;
/// Takes the model's mask (the first of nested sections).
inline std::uint32_t mask_interrupts() noexcept {
  if (model_mask_depth++ == 0) interrupt_mask().lock();
  return 0;
}
/// The model test's stand-in for the hardware taking a pending interrupt
/// the moment the core unmasks: it waits there until the handler started.
inline void (*model_after_unmask)() = nullptr;
/// Lets the model's mask go (the last of nested sections).
inline void restore_interrupts(std::uint32_t) noexcept {
  if (--model_mask_depth != 0) return;
  interrupt_mask().unlock();
  if (model_after_unmask != nullptr) model_after_unmask();
}

/// Set by the model test's simulated interrupt while its handler runs.
inline thread_local bool model_in_handler = false;
/// Whether this model thread runs a simulated interrupt's handler.
inline bool in_interrupt_handler() noexcept { return model_in_handler; }

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

/// Set by a host board while it runs a simulated interrupt's handler.
inline constinit bool host_in_handler = false;
/// Whether a simulated interrupt's handler runs now (host builds).
inline bool in_interrupt_handler() noexcept { return host_in_handler; }

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
