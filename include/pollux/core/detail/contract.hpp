// Debug-build checks of the contract every future keeps. A violation stops
// the program with a message naming the future's type and the rule broken;
// release builds (NDEBUG) compile the checks away.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <string_view>
#include <utility>

#include "pollux/core/detail/thread_context.hpp"

namespace pollux::detail {

/// The name of T as the compiler spells it, for messages. It comes from
/// the function's own signature, so it needs neither RTTI nor a demangler
/// (which allocates): the embedded profile builds with -fno-rtti and no heap.
template <class T>
constexpr std::string_view type_name() noexcept {
  // g++: "... type_name() [with T = X; std::string_view = ...]"
  // clang++: "... type_name() [T = X]"
  constexpr std::string_view signature = __PRETTY_FUNCTION__;
  constexpr std::size_t start = signature.find("T = ") + 4;
  constexpr std::size_t semicolon = signature.find("; ", start);
  constexpr std::size_t end = semicolon != std::string_view::npos ? semicolon : signature.rfind(']');
  // A constant, so that no build (not even -O0) keeps substr's range check,
  // whose failure path would throw or, without exceptions, abort.
  constexpr std::string_view name = signature.substr(start, end - start);
  return name;
}

// Prints "pollux: contract violation: <type> <what>" and stops the program
// (the embedded profile: calls its panic handler with the same text).
[[noreturn]] void contract_violation(std::string_view type, const char* what) noexcept;
// Prints "pollux: contract violation: <text>" and stops the program.
[[noreturn]] void contract_violation_text(const char* text) noexcept;

#ifdef NDEBUG
inline constexpr bool check_contract = false;
#else
inline constexpr bool check_contract = true;
#endif

// Rule 3: a future is never polled again after it returned Ready.
template <class F>
[[noreturn]] void polled_after_ready() noexcept {
  contract_violation(type_name<F>(), "polled again after it returned Ready (contract rule 3)");
}

// Rule 2's checker (a task, or block_on, that returned Pending with no
// waker kept anywhere) exempts a poll that set this: a future that is
// Pending forever by design (pending_future) keeps no waker on purpose.

// Brackets one poll for that check: clears the flag for the poll, tells
// whether the poll set it, and restores the outer poll's flag (a nested
// block_on or task poll) when it ends. Nothing in release builds.
class PendingOnPurposeScope {
 public:
  PendingOnPurposeScope() noexcept {
    if constexpr (check_contract) outer_ = std::exchange(core_context().pending_on_purpose, false);
  }
  ~PendingOnPurposeScope() {
    if constexpr (check_contract) core_context().pending_on_purpose = outer_;
  }
  PendingOnPurposeScope(const PendingOnPurposeScope&) = delete;
  PendingOnPurposeScope& operator=(const PendingOnPurposeScope&) = delete;

  bool set() const noexcept { return core_context().pending_on_purpose; }

 private:
  bool outer_ = false;
};

// Rule 2 broken under block_on: F returned Pending and no clone of the
// waker exists.
template <class F>
[[noreturn]] void kept_no_waker_in_block_on() noexcept {
  contract_violation(type_name<F>(), "returned Pending to block_on but kept no waker: it will never be woken (rule 2)");
}

}  // namespace pollux::detail

// Checks `cond` in debug builds; on failure reports rule 3 for type F.
#define POLLUX_CHECK_NOT_DONE(F, cond)                        \
  do {                                                        \
    if constexpr (::pollux::detail::check_contract) {         \
      if (!(cond)) ::pollux::detail::polled_after_ready<F>(); \
    }                                                         \
  } while (false)
