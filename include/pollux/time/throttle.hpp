// throttle(stream, d): the same items, at most one per `d`: after an item
// the source is not polled again until `d` has passed (tokio-stream's
// throttle), so a fast source is slowed down, and nothing is dropped. The
// first item is not delayed. The Sleep inside is re-armed in place, so
// nothing is allocated per item (rule 4: not moved after its first poll).
// Pipe form: `s | throttle(d)`. Cancellation: nothing is buffered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"
#include "pollux/time/sleep.hpp"

namespace pollux {
namespace stream {

/// The stream throttle(s, d) returns.
template <Stream S>
class [[nodiscard("streams do nothing unless polled")]] Throttle {
 public:
  using Item = item_t<S>;

  /// What throttle() makes; call that instead.
  Throttle(S source, Duration d) : source_(std::move(source)), period_(d), sleep_(Instant{}) {}

  /// The source's next item, no sooner than the duration after the previous one.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (delayed_) {
      if (sleep_.poll(cx).is_pending()) return pending;
      delayed_ = false;
    }
    auto item = source_.poll_next(cx);
    if (item.is_ready() && item.value()) {
      sleep_.reset(detail::saturating_add(now(), period_));
      delayed_ = true;
    }
    return item;
  }

 private:
  S source_;
  Duration period_;
  Sleep sleep_;
  bool delayed_ = false;  // an item went by less than period_ ago
};

}  // namespace stream

/// The items of `source`, at most one per `d`.
template <Stream S>
stream::Throttle<S> throttle(S source, Duration d) {
  return stream::Throttle<S>(std::move(source), d);
}

/// `s | throttle(d)`.
inline auto throttle(Duration d) {
  return stream_pipe([d]<Stream S>(S source) { return throttle(std::move(source), d); });
}

}  // namespace pollux
