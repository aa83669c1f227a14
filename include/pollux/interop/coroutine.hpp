// C++20 coroutines and pollux futures, both ways: pollux::Coro<T>, a
// coroutine that is a pollux future (interop/coro.hpp), and
// pollux::awaitable(f), a pollux future awaited in any other coroutine
// (interop/future_awaitable.hpp). pollux's own futures stay free of
// coroutines: these headers are the only ones that have them.
#pragma once

#include "pollux/interop/coro.hpp"
#include "pollux/interop/future_awaitable.hpp"
