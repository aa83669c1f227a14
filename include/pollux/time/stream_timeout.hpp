// timeout(stream, d): a stream of Result<Item, Elapsed>: each item of the
// source as a value, or Elapsed when the source kept us waiting `d` (from
// the poll that started waiting for that item). The stream goes on after an
// Elapsed: the next wait gets a fresh `d` (tokio-stream's timeout). The
// timer is a Sleep inside the adapter, re-armed in place, so nothing is
// allocated per item (rule 4: not moved after its first poll).
// Pipe form: `s | timeout(d)`. It lives in time/ because it needs the
// driver. Cancellation: nothing is buffered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"
#include "pollux/core/result.hpp"
#include "pollux/time/elapsed.hpp"
#include "pollux/time/sleep.hpp"

namespace pollux {

namespace stream {

/// The stream timeout(s, d) returns.
template <Stream S>
class [[nodiscard("streams do nothing unless polled")]] Timeout {
 public:
  using Item = Result<item_t<S>, Elapsed>;

  /// What timeout() makes; call that instead.
  Timeout(S source, Duration d) : source_(std::move(source)), duration_(d), sleep_(Instant{}) {}

  /// The source's next item, or Elapsed when none came within the duration.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    auto item = source_.poll_next(cx);
    if (item.is_ready()) {
      waiting_ = false;
      if (!item.value()) return stream_end;
      return Poll<std::optional<Item>>(std::in_place, std::in_place, std::move(*item.value()));
    }
    if (!waiting_) {  // a new wait: a fresh deadline
      sleep_.reset(detail::saturating_add(now(), duration_));
      waiting_ = true;
    }
    if (sleep_.poll(cx).is_pending()) return pending;
    waiting_ = false;
    return Poll<std::optional<Item>>(std::in_place, std::in_place, Elapsed{});
  }

 private:
  S source_;
  Duration duration_;
  Sleep sleep_;
  bool waiting_ = false;  // the deadline of sleep_ is for the current wait
};

}  // namespace stream

/// Each item of `source`, or Elapsed after `d` without one.
template <Stream S>
stream::Timeout<S> timeout(S source, Duration d) {
  return stream::Timeout<S>(std::move(source), d);
}

/// `s | timeout(d)`.
inline auto timeout(Duration d) {
  return stream_pipe([d]<Stream S>(S source) { return timeout(std::move(source), d); });
}

}  // namespace pollux
