// zip(a, b): pairs of items, one from each stream, ending when either
// ends. Both are polled on each poll_next; an item that came before its
// partner waits inside the Zip. Pipe form: `a | zip(b)`.
// Cancellation: destroying it loses an item that was waiting for its
// partner.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream zip(a, b) returns.
template <Stream A, Stream B>
class [[nodiscard("streams do nothing unless polled")]] Zip {
 public:
  using Item = std::pair<item_t<A>, item_t<B>>;

  /// What zip() makes; call that instead.
  Zip(A a, B b) : a_(std::move(a)), b_(std::move(b)) {}

  /// The next item of each stream, as a pair; the end once either ended.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (done_) return stream_end;
    if (!left_ && !take(a_, left_, cx)) return stream_end;
    if (!right_ && !take(b_, right_, cx)) return stream_end;
    if (!left_ || !right_) return pending;
    Item item(std::move(*left_), std::move(*right_));
    left_.reset();
    right_.reset();
    return ready(std::move(item));
  }

 private:
  // Polls one side into `slot`; false when that side ended.
  template <class Side, class Slot>
  bool take(Side & side, Slot & slot, Context & cx) {
    auto item = side.poll_next(cx);
    if (item.is_pending()) return true;
    if (!item.value()) {
      done_ = true;
      return false;
    }
    slot.emplace(std::move(*item.value()));
    return true;
  }

  A a_;
  B b_;
  std::optional<item_t<A>> left_;
  std::optional<item_t<B>> right_;
  bool done_ = false;
};

}  // namespace stream

/// Pairs of the items of `a` and `b`, in step.
template <Stream A, Stream B>
stream::Zip<A, B> zip(A a, B b) {
  return stream::Zip<A, B>(std::move(a), std::move(b));
}

/// `a | zip(b)`.
template <Stream B>
auto zip(B b) {
  return stream_pipe([b = std::move(b)]<Stream A>(A a) mutable { return zip(std::move(a), std::move(b)); });
}

}  // namespace pollux
