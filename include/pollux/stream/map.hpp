// map(stream, fn): a stream of fn(item) for each item. fn runs on the poll
// that finds the item, on the polling thread. Pipe form: `s | map(fn)` (the
// same map(fn) as for futures). Cancellation: nothing is buffered, so
// nothing is lost between items.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

#include "pollux/future/map.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream map(s, fn) returns.
template <Stream S, class Fn>
class [[nodiscard("streams do nothing unless polled")]] Map {
 public:
  using Item = std::invoke_result_t<Fn&, item_t<S>&&>;

  /// What map() makes; call that instead.
  Map(S source, Fn fn) : source_(std::move(source)), fn_(std::move(fn)) {}

  /// fn of the source's next item.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    auto item = source_.poll_next(cx);
    if (item.is_pending()) return pending;
    if (!item.value()) return stream_end;
    return Poll<std::optional<Item>>(std::in_place, std::invoke(fn_, std::move(*item.value())));
  }

 private:
  S source_;
  Fn fn_;
};

}  // namespace stream

/// A stream of `fn(item)` for each item of `source`.
template <Stream S, class Fn>
requires std::invocable<Fn&, item_t<S> &&> stream::Map<S, Fn> map(S source, Fn fn) {
  return stream::Map<S, Fn>(std::move(source), std::move(fn));
}

/// `stream | map(fn)`.
template <Stream S, class Fn>
auto pipe_into(S source, MapAdaptor<Fn> adaptor) {
  if constexpr (std::is_invocable_v<Fn&, item_t<S>&&>) {
    return stream::Map<S, Fn>(std::move(source), std::move(adaptor.fn));
  } else {
    static_assert(detail::kFalse<S>, "pollux: `stream | map(fn)`: fn cannot take the stream's items");
    return detail::Misused{};
  }
}

}  // namespace pollux
