// pollux/sync.hpp: The async sync primitives: channels (mpsc, oneshot, broadcast, watch),
// Mutex, RwLock, Semaphore, Notify, Barrier and CancellationToken.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/sync/barrier.hpp"
#include "pollux/sync/broadcast.hpp"
#include "pollux/sync/cancellation_token.hpp"
#include "pollux/sync/mpsc.hpp"
#include "pollux/sync/mutex.hpp"
#include "pollux/sync/notify.hpp"
#include "pollux/sync/once_cell.hpp"
#include "pollux/sync/oneshot.hpp"
#include "pollux/sync/rw_lock.hpp"
#include "pollux/sync/semaphore.hpp"
#include "pollux/sync/static_channel.hpp"
#include "pollux/sync/watch.hpp"
