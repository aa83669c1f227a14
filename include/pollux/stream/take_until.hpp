// take_until(stream, future): the items of the stream until the future is
// Ready, then the end (futures-rs's take_until): how a loop over a stream
// stops on an outside event, such as a shutdown signal. The future is
// polled first on each poll_next, so once it is Ready no further item is
// taken; the source is then released at once. Pipe form:
// `s | take_until(f)`. Cancellation: nothing is buffered; the future's
// output is dropped.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/core/future.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream take_until(s, f) returns.
template <Stream S, Future F>
class [[nodiscard("streams do nothing unless polled")]] TakeUntil {
 public:
  using Item = item_t<S>;

  /// What take_until() makes; call that instead.
  TakeUntil(S source, F stop) : source_(std::in_place, std::move(source)), stop_(std::in_place, std::move(stop)) {}

  /// The source's next item, until the stop future is Ready; then the end.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (!source_) return stream_end;
    if (stop_ && stop_->poll(cx).is_ready()) {
      stop_.reset();
      source_.reset();
      return stream_end;
    }
    auto item = source_->poll_next(cx);
    if (item.is_ready() && !item.value()) source_.reset();
    return item;
  }

  /// Whether the future ended the stream (rather than the source's end).
  bool was_stopped() const noexcept { return !stop_ && !source_; }

 private:
  std::optional<S> source_;  // empty once ended
  std::optional<F> stop_;    // empty once Ready
};

}  // namespace stream

/// The items of `source` until `stop` is Ready.
template <Stream S, Future F>
stream::TakeUntil<S, F> take_until(S source, F stop) {
  return stream::TakeUntil<S, F>(std::move(source), std::move(stop));
}

/// `s | take_until(f)`.
template <Future F>
auto take_until(F stop) {
  return stream_pipe(
      [stop = std::move(stop)]<Stream S>(S source) mutable { return take_until(std::move(source), std::move(stop)); });
}

}  // namespace pollux
