// Per-thread state, one small struct per layer, as tokio keeps its
// runtime/context.rs: `per_thread<C>` is this thread's instance of a layer's
// context struct C, and the layer that declares C is the only one that names
// it, so the core knows no type of the layers above it. Here: the core's own
// fields (the coop budget, the contract checks' flag).
//
// Every field is borrowed: who sets a field owns what it points to and
// outlives the scope it sets it for (rule 5's destructors run inside those
// scopes). The per-thread objects that own memory and free it at thread exit
// (a thread's Parker, its slab heap) stay apart, in their own files.
// ContextScope sets one field for a scope and puts the outer value back, so
// scopes nest (block_on inside a task, a runtime entered inside another).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <utility>

namespace pollux::detail {

/// This thread's instance of the per-thread context struct C. Constant-
/// initialized and trivially destructible, so reaching it is one
/// thread-pointer-relative access, with no init-on-first-use check.
/// The single-core profile has one thread (interrupt handlers use no
/// context), and a bare-metal toolchain often no thread-local storage.
template <class C>
#if defined(POLLUX_SINGLE_CORE)
inline constinit C per_thread{};
#else
inline thread_local constinit C per_thread{};
#endif

/// The core's per-thread fields.
struct CoreThreadContext {
  /// The coop budget of the current poll (-1: unlimited).
  int coop_budget = -1;
  /// Set by a poll that is Pending forever on purpose (contract checks).
  bool pending_on_purpose = false;
};

/// This thread's core fields.
inline CoreThreadContext& core_context() noexcept { return per_thread<CoreThreadContext>; }

template <class T>
struct ContextField;
template <class C, class T>
struct ContextField<T C::*> {
  using Context = C;
  using Type = T;
};

/// Sets one field of this thread's context for the guard's lifetime; the
/// outer value comes back after.
/// `ContextScope<&TimeThreadContext::timers> scope(queue);`
template <auto Field>
class [[nodiscard]] ContextScope {
  using C = typename ContextField<decltype(Field)>::Context;
  using T = typename ContextField<decltype(Field)>::Type;

 public:
  /// Sets the field to `value`.
  explicit ContextScope(T value) noexcept : saved_(std::exchange(per_thread<C>.*Field, value)) {}
  /// Puts the outer value back.
  ~ContextScope() { per_thread<C>.*Field = saved_; }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  T saved_;
};

}  // namespace pollux::detail
