// pollux/process.hpp: child processes: Command, Child (waited on through a
// pidfd the reactor watches), their pipes as AsyncRead/AsyncWrite, and
// output() and status() as futures.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/process/child.hpp"
#include "pollux/process/child_pipe.hpp"
#include "pollux/process/command.hpp"
#include "pollux/process/exit_status.hpp"
