// pollux/future.hpp: The future combinators: join, select, map, then, fuse, abortable and
// the rest (rule 1: each polls its children only when it is polled).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/future/abortable.hpp"
#include "pollux/future/by_ref.hpp"
#include "pollux/future/catch_exception.hpp"
#include "pollux/future/either.hpp"
#include "pollux/future/fuse.hpp"
#include "pollux/future/join.hpp"
#include "pollux/future/join_all.hpp"
#include "pollux/future/join_array.hpp"
#include "pollux/future/lazy.hpp"
#include "pollux/future/map.hpp"
#include "pollux/future/pending.hpp"
#include "pollux/future/poll_fn.hpp"
#include "pollux/future/ready.hpp"
#include "pollux/future/select.hpp"
#include "pollux/future/select_all.hpp"
#include "pollux/future/then.hpp"
#include "pollux/future/try_join.hpp"
#include "pollux/future/try_join_all.hpp"
#include "pollux/future/yield_now.hpp"
