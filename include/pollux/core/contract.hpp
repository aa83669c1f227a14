// Debug-build checks of the contract every future keeps. A violation stops
// the program with a message naming the future's type and the rule broken;
// release builds (NDEBUG) compile the checks away.
#pragma once

#include <string>
#include <typeinfo>

namespace pollux::detail {

// Prints "pollux: contract violation: <demangled type> <what>" and aborts.
[[noreturn]] void contract_violation(const std::type_info& type, const char* what) noexcept;
// Prints "pollux: contract violation: <text>" and aborts.
[[noreturn]] void contract_violation_text(const char* text) noexcept;
// The demangled name of a type, for messages.
std::string type_name(const std::type_info& type);

#ifdef NDEBUG
inline constexpr bool check_contract = false;
#else
inline constexpr bool check_contract = true;
#endif

// Rule 3: a future is never polled again after it returned Ready.
template <class F>
[[noreturn]] void polled_after_ready() noexcept {
  contract_violation(typeid(F), "polled again after it returned Ready (contract rule 3)");
}

// Rule 2's checker (a task, or block_on, that returned Pending with no
// waker kept anywhere) exempts a poll that set this: a future that is
// Pending forever by design (pending_future) keeps no waker on purpose.
inline thread_local bool pending_on_purpose = false;

}  // namespace pollux::detail

// Checks `cond` in debug builds; on failure reports rule 3 for type F.
#define POLLUX_CHECK_NOT_DONE(F, cond)                                              \
  do {                                                                              \
    if constexpr (::pollux::detail::check_contract) {                               \
      if (!(cond)) ::pollux::detail::polled_after_ready<F>();                       \
    }                                                                               \
  } while (false)
