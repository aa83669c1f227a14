// What a debug build does with a spawned task that returned Pending and
// kept no waker (rule 2). Such a task cannot run again, but it may be
// correct: a task that only waits to be aborted, dropped with its JoinSet
// or ended by its executor's shutdown needs no waker. So it is reported,
// not fatal, unless the executor asks; block_on of such a future hangs for
// certain and always stops the program. Release builds check nothing.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

namespace pollux {

/// The choice for a spawned task that returned Pending with no waker kept
/// anywhere (checked in debug builds only).
enum class LostWake {
  Ignore,     ///< say nothing: tasks that wait only to be cancelled are expected
  Report,     ///< print "pollux: task ID "NAME" (future TYPE) returned Pending but kept no waker ..." on stderr (the
              ///< default)
  Terminate,  ///< report it, then abort: treat it as the bug it usually is
};

}  // namespace pollux
