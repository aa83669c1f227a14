// pollux/sink.hpp: Sinks: values sent into something that can push back (send, flush,
// send_all, with).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/sink/flush.hpp"
#include "pollux/sink/send.hpp"
#include "pollux/sink/send_all.hpp"
#include "pollux/sink/sink.hpp"
#include "pollux/sink/with.hpp"
