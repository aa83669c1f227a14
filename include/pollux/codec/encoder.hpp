// Encoder: turns an item into bytes at the back of a write buffer,
// tokio-util's Encoder. Framed calls encode once per item sent and writes
// the buffer out when it is flushed, so many small items go in one write.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <concepts>
#include <system_error>

#include "pollux/core/result.hpp"
#include "pollux/io/bytes_buf.hpp"

namespace pollux {

/// A codec's writing side for items of `Item`: `Error` (constructible from
/// std::error_code) and encode(item, buffer), which appends the item's
/// bytes or answers why it cannot.
template <class E, class Item>
concept Encoder = requires(E& encoder, Item&& item, BytesBuf& buffer) {
  typename E::Error;
  { encoder.encode(static_cast<Item&&>(item), buffer) } -> std::same_as<Result<void, typename E::Error>>;
}
&&std::constructible_from<typename E::Error, std::error_code>;

}  // namespace pollux
