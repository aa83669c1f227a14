// pollux/time.hpp: Time: Instant, sleep, interval, timeout, Deadline, idle_timeout and the
// timed stream adapters, driven by the runtime's timer wheel.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/time/deadline.hpp"
#include "pollux/time/delay_queue.hpp"
#include "pollux/time/elapsed.hpp"
#include "pollux/time/idle_timeout.hpp"
#include "pollux/time/instant.hpp"
#include "pollux/time/interval.hpp"
#include "pollux/time/sleep.hpp"
#include "pollux/time/stream_timeout.hpp"
#include "pollux/time/throttle.hpp"
#include "pollux/time/timeout.hpp"
