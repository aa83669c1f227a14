// pollux/core.hpp: The core contract: Poll, Context, Waker, the Future concept, Result,
// POLLUX_TRY_READY, the pipe form and the slab tasks live in.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/core/atomic_waker.hpp"
#include "pollux/core/box_future.hpp"
#include "pollux/core/context.hpp"
#include "pollux/core/coop.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/future_slot.hpp"
#include "pollux/core/maybe_done.hpp"
#include "pollux/core/no_runtime.hpp"
#include "pollux/core/panic.hpp"
#include "pollux/core/pipe.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/result.hpp"
#include "pollux/core/slab.hpp"
#include "pollux/core/try_ready.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/core/waker.hpp"
