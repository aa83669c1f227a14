// Included first by every header that the embedded profile leaves out
// (it needs the heap, threads or an operating system), so that using one
// there stops at once with this message rather than with a link error or
// an error deep inside the header.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#if defined(POLLUX_SINGLE_CORE)
#error \
    "pollux: this header is not in the embedded profile: it needs the heap, threads or an operating system (the README's chapter \"Embedded: one core, no heap\" lists what the profile has)"
#endif
