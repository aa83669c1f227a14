// Stops a hosted build that includes the embedded profile's headers: their
// critical sections mask interrupts, which protects nothing against a
// second thread.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#if !defined(POLLUX_SINGLE_CORE)
#error "pollux/embedded/ is the single-core profile: build with -Dprofile=embedded (it defines POLLUX_SINGLE_CORE)"
#endif
