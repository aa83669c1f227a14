// The poll shared by the hosted Timeout and the embedded profile's
// TickTimeout: the inner future first, so one that is ready at once never
// arms the timer, then the sleep. Either way the sleep is dropped at once,
// which takes it out of its timer's queue (rule 5) before the timeout
// itself goes.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/core/future.hpp"
#include "pollux/time/elapsed.hpp"

namespace pollux::detail {

/// One poll of a timeout: Ready with `inner`'s output, or with Elapsed once
/// `sleep` ends first; `sleep` is empty once it returned Ready.
template <class Output, Future F, Future S>
Poll<Output> poll_timeout(F& inner, std::optional<S>& sleep, Context& cx) {
  if (auto result = poll_unit(inner, cx); result.is_ready()) {
    sleep.reset();
    return Poll<Output>(std::in_place, std::move(result).value());
  }
  if (sleep->poll(cx).is_pending()) return pending;
  sleep.reset();
  return Poll<Output>(std::in_place, Elapsed{});
}

}  // namespace pollux::detail
