// chain(first, second): every item of first, then every item of second
// (which is not polled before first ended). Both yield the same type.
// Pipe form: `a | chain(b)`. Cancellation: nothing is buffered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream chain(a, b) returns.
template <Stream A, Stream B>
requires std::same_as<item_t<A>, item_t<B>>
class [[nodiscard("streams do nothing unless polled")]] Chain {
 public:
  using Item = item_t<A>;

  /// What chain() makes; call that instead.
  Chain(A first, B second) : first_(std::in_place, std::move(first)), second_(std::move(second)) {}

  /// The first stream's next item; once it ended, the second's.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (first_) {
      auto item = first_->poll_next(cx);
      if (item.is_pending() || item.value()) return item;
      first_.reset();  // ended: it is released at once, not with the chain
    }
    return second_.poll_next(cx);
  }

 private:
  std::optional<A> first_;
  B second_;
};

}  // namespace stream

/// The items of `first`, then those of `second`.
template <Stream A, Stream B>
stream::Chain<A, B> chain(A first, B second) {
  return stream::Chain<A, B>(std::move(first), std::move(second));
}

/// `first | chain(second)`.
template <Stream B>
auto chain(B second) {
  return stream_pipe(
      [second = std::move(second)]<Stream A>(A first) mutable { return chain(std::move(first), std::move(second)); });
}

}  // namespace pollux
