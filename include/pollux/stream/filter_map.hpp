// filter_map(stream, fn): fn(item) returns a std::optional; the stream
// yields the values and skips the nullopts. Pipe form: `s | filter_map(fn)`.
// Cancellation: nothing is buffered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream filter_map(s, fn) returns.
template <Stream S, class Fn>
class [[nodiscard("streams do nothing unless polled")]] FilterMap {
  using Result = std::invoke_result_t<Fn&, item_t<S>&&>;

 public:
  using Item = typename Result::value_type;

  /// What filter_map() makes; call that instead.
  FilterMap(S source, Fn fn) : source_(std::move(source)), fn_(std::move(fn)) {}

  /// fn of the source's next item for which fn gives a value.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    for (;;) {
      auto item = source_.poll_next(cx);
      if (item.is_pending()) return pending;
      if (!item.value()) return stream_end;
      Result mapped = std::invoke(fn_, std::move(*item.value()));
      if (mapped) return Poll<std::optional<Item>>(std::in_place, std::move(mapped));
    }
  }

 private:
  S source_;
  Fn fn_;
};

}  // namespace stream

/// The values of the optionals `fn(item)`, skipping the empty ones.
template <Stream S, class Fn>
requires std::invocable<Fn&, item_t<S> &&> stream::FilterMap<S, Fn> filter_map(S source, Fn fn) {
  return stream::FilterMap<S, Fn>(std::move(source), std::move(fn));
}

/// `stream | filter_map(fn)`.
template <class Fn>
auto filter_map(Fn fn) {
  return stream_pipe([fn = std::move(fn)]<Stream S>(S source) mutable {
    if constexpr (std::invocable<Fn&, item_t<S>&&>) {
      return filter_map(std::move(source), std::move(fn));
    } else {
      static_assert(detail::kFalse<S>, "pollux: `stream | filter_map(fn)`: fn cannot take the stream's items");
      return detail::Misused{};
    }
  });
}

}  // namespace pollux
