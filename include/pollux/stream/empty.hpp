// empty<T>(): a stream that ends at once, without an item. It holds
// nothing, so destroying it loses nothing.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream empty<T>() returns.
template <class T>
class [[nodiscard("streams do nothing unless polled")]] Empty {
 public:
  using Item = T;

  /// The end, at once.
  Poll<std::optional<Item>> poll_next(Context&) noexcept { return stream_end; }
};

}  // namespace stream

/// A stream of T with no items.
template <class T>
stream::Empty<T> empty() noexcept {
  return {};
}

}  // namespace pollux
