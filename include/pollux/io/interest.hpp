// Interest: the direction an I/O operation waits on. A socket keeps one
// waker per interest, and a future destroyed while it waits gives its
// waker back with `abandon(interest)` (rule 5), the one name every socket,
// stream and wrapper in io/ uses for it.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstdint>

namespace pollux {

/// The direction an operation waits on: reading (and accepting, receiving)
/// or writing (and connecting, sending).
enum class Interest : std::uint8_t { Read, Write };

}  // namespace pollux
