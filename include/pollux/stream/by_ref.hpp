// by_ref(stream): a stream that polls a longer-lived stream through a
// reference, so that an adapter or a consumer can read part of it and
// leave the rest: `by_ref(lines) | take(3) | collect()` reads three lines
// and `lines` goes on from the fourth. The stream must outlive the ByRef.
// Cancellation: destroying a ByRef leaves the stream as it was.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream by_ref(s) returns.
template <Stream S>
class [[nodiscard("streams do nothing unless polled")]] ByRef {
 public:
  using Item = item_t<S>;
  /// A borrowed collection is as refillable as the collection.
  static constexpr bool refillable = RefillableStream<S>;

  /// What by_ref() makes; call that instead.
  explicit ByRef(S & source) noexcept : source_(&source) {}

  /// The borrowed stream's next item, polled where the stream lives.
  Poll<std::optional<Item>> poll_next(Context & cx) { return source_->poll_next(cx); }

 private:
  S* source_;
};

}  // namespace stream

/// `source`, borrowed: adapters over it leave it to its owner.
template <Stream S>
requires(!Future<S>) stream::ByRef<S> by_ref(S& source)
noexcept { return stream::ByRef<S>(source); }

}  // namespace pollux
