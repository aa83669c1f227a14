// count(stream): a future of how many items the stream had. Pipe form:
// `s | count()`. Cancellation: destroying it loses the count so far.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The future count(s) returns.
template <Stream S>
class [[nodiscard("futures do nothing unless polled")]] Count {
 public:
  using Output = std::size_t;

  /// What count() makes; call that instead.
  explicit Count(S source) : source_(std::move(source)) {}

  /// Takes every item; Ready with how many there were at the end of the stream.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Count, !done_);
    for (;;) {
      auto item = source_.poll_next(cx);
      if (item.is_pending()) return pending;
      if (!item.value()) {
        done_ = true;
        return ready(count_);
      }
      ++count_;
    }
  }

 private:
  S source_;
  std::size_t count_ = 0;
  bool done_ = false;
};

}  // namespace stream

/// The number of items of `source`.
template <Stream S>
stream::Count<S> count(S source) {
  return stream::Count<S>(std::move(source));
}

/// `s | count()`.
inline auto count() {
  return stream_pipe([]<Stream S>(S source) { return count(std::move(source)); });
}

}  // namespace pollux
