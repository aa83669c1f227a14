// POLLUX_TRY_READY and POLLUX_TRY_READY_ASSIGN: the two lines a hand-written
// poll repeats most, as futures-rs's ready! and pw_async2's PW_TRY_READY: a
// child that is Pending makes this poll Pending too. The child stored the
// waker (rule 2), so returning at once keeps the contract.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <utility>

#include "pollux/core/poll.hpp"

/// Polls `expr` (a Poll) and returns Pending from the enclosing poll when it is.
#define POLLUX_TRY_READY(expr)                         \
  do {                                                 \
    if ((expr).is_pending()) return ::pollux::pending; \
  } while (false)

#define POLLUX_DETAIL_CONCAT_INNER(a, b) a##b
#define POLLUX_DETAIL_CONCAT(a, b) POLLUX_DETAIL_CONCAT_INNER(a, b)
#define POLLUX_DETAIL_TRY_READY_ASSIGN(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (tmp.is_pending()) return ::pollux::pending;      \
  lhs = std::move(tmp).value()

/// Polls `expr` (a Poll of a value): returns Pending from the enclosing poll
/// when it is, else assigns the value to `lhs`, which may declare it:
/// `POLLUX_TRY_READY_ASSIGN(std::size_t n, read_.poll(cx));`
#define POLLUX_TRY_READY_ASSIGN(lhs, expr) \
  POLLUX_DETAIL_TRY_READY_ASSIGN(POLLUX_DETAIL_CONCAT(pollux_try_ready_, __LINE__), lhs, expr)
