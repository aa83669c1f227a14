// The I/O layer's per-thread fields (see core/detail/thread_context.hpp):
// the reactor and, on the io_uring backend, the ring of the driver installed
// on this thread, which sockets register with.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/core/detail/thread_context.hpp"

namespace pollux::detail {

class Reactor;
class Ring;

/// What the I/O layer keeps per thread.
struct IoThreadContext {
  /// The reactor of the driver installed here (null outside a runtime).
  Reactor* reactor = nullptr;
  /// That driver's ring, on the io_uring backend (else null).
  Ring* ring = nullptr;
};

/// This thread's I/O-layer fields.
inline IoThreadContext& io_context() noexcept { return per_thread<IoThreadContext>; }

}  // namespace pollux::detail
