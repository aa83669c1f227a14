// Failure without exceptions. Where the hosted library throws, a build
// without exceptions (the embedded profile: -fno-exceptions) calls the
// panic handler with the same message, and so does a contract violation;
// a user may install their own (to log, blink, or reset the board).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

namespace pollux {

/// Ends the program after a fatal error, with its message. It must not
/// return: the code that called it cannot go on.
using PanicHandler = void (*)(const char* message) noexcept;

/// Installs `handler` (nullptr: the default) and returns the one it
/// replaces. The default writes "pollux: panic: <message>" (to stderr on
/// a host, through board::write in the embedded profile) and stops (abort
/// on a host, board::exit(1) in the embedded profile). Not thread-safe:
/// install it before the program starts its tasks.
PanicHandler set_panic_handler(PanicHandler handler) noexcept;

/// Calls the panic handler with `message`; never returns.
[[noreturn]] void panic(const char* message) noexcept;

namespace detail {

/// Throws E(message) where the build has exceptions; else panics with it.
template <class E>
[[noreturn, gnu::cold]] void raise(const char* message) {
#if defined(__cpp_exceptions)
  throw E(message);
#else
  ::pollux::panic(message);
#endif
}

}  // namespace detail
}  // namespace pollux
