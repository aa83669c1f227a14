// once(f): a stream of one item, the output of future f, then its end
// (futures-rs's stream::once). Cancellation: destroying it destroys f.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/core/future.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream once(f) returns.
template <Future F>
class [[nodiscard("streams do nothing unless polled")]] Once {
 public:
  using Item = unit_if_void_t<output_t<F>>;

  /// What once() makes; call that instead.
  explicit Once(F future) : future_(std::in_place, std::move(future)) {}

  /// The future's output once it is Ready; then the end.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (!future_) return stream_end;
    auto item = poll_unit(*future_, cx);
    if (item.is_pending()) return pending;
    future_.reset();
    return ready(std::move(item).value());
  }

 private:
  std::optional<F> future_;  // empty: the item was yielded
};

}  // namespace stream

/// A stream of the one output of `future`.
template <Future F>
stream::Once<F> once(F future) {
  return stream::Once<F>(std::move(future));
}

}  // namespace pollux
