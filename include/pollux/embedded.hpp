// The embedded profile's layer (-Dprofile=embedded, POLLUX_SINGLE_CORE):
// static tasks, the single-core executor woken by interrupts, and time from
// a tick interrupt. The board's functions are declared in embedded/board.hpp.
#pragma once

#include "pollux/embedded/board.hpp"
#include "pollux/embedded/executor.hpp"
#include "pollux/embedded/interval.hpp"
#include "pollux/embedded/sleep.hpp"
#include "pollux/embedded/static_task.hpp"
#include "pollux/embedded/tick_timer.hpp"
#include "pollux/embedded/timeout.hpp"
