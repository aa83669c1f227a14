// then(stream, fn): a stream of the outputs of fn(item), a future, for each
// item, one at a time and in order (the next item is not taken before the
// future made from the last one finished). Pipe form: `s | then(fn)`.
// For several at once, `s | map(fn) | buffered(n)`.
// Cancellation: destroying it destroys the running future and loses the
// item it was made from.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

#include "pollux/core/future.hpp"
#include "pollux/future/then.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream then(s, fn) returns.
template <Stream S, class Fn>
requires Future<std::invoke_result_t<Fn&, item_t<S> &&>> class [[nodiscard("streams do nothing unless polled")]] Then {
  using Step = std::invoke_result_t<Fn&, item_t<S>&&>;

 public:
  using Item = unit_if_void_t<output_t<Step>>;

  /// What then() makes; call that instead.
  Then(S source, Fn fn) : source_(std::move(source)), fn_(std::move(fn)) {}

  /// The output of fn's future for the source's next item.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (!step_) {
      auto item = source_.poll_next(cx);
      if (item.is_pending()) return pending;
      if (!item.value()) return stream_end;
      step_.emplace(std::invoke(fn_, std::move(*item.value())));
    }
    auto out = poll_unit(*step_, cx);
    if (out.is_pending()) return pending;
    step_.reset();
    return ready(std::move(out).value());
  }

 private:
  S source_;
  Fn fn_;
  std::optional<Step> step_;  // the future of the current item
};

}  // namespace stream

/// A stream of the outputs of the futures `fn(item)`, run one at a time.
template <Stream S, class Fn>
requires Future<std::invoke_result_t<Fn&, item_t<S> &&>> stream::Then<S, Fn> then(S source, Fn fn) {
  return stream::Then<S, Fn>(std::move(source), std::move(fn));
}

/// `stream | then(fn)`.
template <Stream S, class Fn>
auto pipe_into(S source, ThenAdaptor<Fn> adaptor) {
  if constexpr (!std::is_invocable_v<Fn&, item_t<S>&&>) {
    static_assert(detail::kFalse<S>, "pollux: `stream | then(fn)`: fn cannot take the stream's items");
    return detail::Misused{};
  } else if constexpr (!Future<std::invoke_result_t<Fn&, item_t<S>&&>>) {
    static_assert(detail::kFalse<S>,
                  "pollux: `stream | then(fn)`: fn must return a future; for a plain value, use map(fn)");
    return detail::Misused{};
  } else {
    return stream::Then<S, Fn>(std::move(source), std::move(adaptor.fn));
  }
}

}  // namespace pollux
