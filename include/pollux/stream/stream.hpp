// Stream: an asynchronous sequence, `Poll<std::optional<Item>>
// poll_next(Context&)` (nullopt: the stream ended). The same rules as
// futures apply to each poll_next (rule 2: Pending stores the waker), and a
// stream is not polled again after it ended. next(stream) is a future of
// the next item that borrows the stream, so a loop reads
// `while (auto item = co-like-await next(s))` by polling it.
#pragma once

#include <concepts>
#include <optional>

#include "pollux/core/contract.hpp"
#include "pollux/core/future.hpp"

namespace pollux {

template <class S>
concept Stream = std::is_object_v<S> && requires(S& s, Context& cx) {
  typename S::Item;
  { s.poll_next(cx) } -> std::same_as<Poll<std::optional<typename S::Item>>>;
};

template <Stream S>
using item_t = typename S::Item;

// next(stream): Ready with the stream's next item (nullopt at its end).
// Cancellation safety: dropping a Next loses nothing; the stream keeps
// whatever it had not yet yielded.
template <Stream S>
class Next {
 public:
  using Output = std::optional<item_t<S>>;

  explicit Next(S& stream) noexcept : stream_(&stream) {}

  Poll<Output> poll(Context& cx) {
    POLLUX_CHECK_NOT_DONE(Next, !done_);
    auto item = stream_->poll_next(cx);
    if (item.is_ready()) done_ = true;
    return item;
  }

 private:
  S* stream_;
  bool done_ = false;
};

template <Stream S>
Next<S> next(S& stream) noexcept {
  return Next<S>(stream);
}

}  // namespace pollux
