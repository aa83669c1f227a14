// NoRuntime: what a leaf future (a timer, a socket) throws when it is
// polled on a thread where no runtime installed the driver it needs. It is
// the contract's rule 8 (misuse is a clear error) for the futures that need
// a runtime; time/ and io/ throw it with the same words.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <stdexcept>

namespace pollux {

/// Thrown when a timer or a socket is polled on a thread where no
/// runtime is running, or after the driver it waited on was destroyed.
class NoRuntime : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace detail {

/// Throws NoRuntime saying that `what` was polled outside a runtime, and
/// how to run it inside one.
[[noreturn]] void throw_no_runtime(const char* what);

}  // namespace detail

}  // namespace pollux
