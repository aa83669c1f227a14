// merge(a, b): the items of two streams of one type, as each comes, ending
// when both ended. Fair: each poll_next starts with the other stream than
// the last one did, so two streams that are always ready alternate. For
// streams of different types, merge_variant. Pipe form: `a | merge(b)`.
// Cancellation: nothing is buffered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <optional>
#include <utility>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream merge(a, b) returns.
template <Stream A, Stream B>
requires std::same_as<item_t<A>, item_t<B>>
class [[nodiscard("streams do nothing unless polled")]] Merge {
 public:
  using Item = item_t<A>;

  /// What merge() makes; call that instead.
  Merge(A a, B b) : a_(std::move(a)), b_(std::move(b)) {}

  /// The next item of either stream, starting with the other one each time; the end once both
  /// ended.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    b_first_ = !b_first_;
    if (b_first_) {
      if (auto item = poll_one(b_, b_done_, cx)) return std::move(*item);
      if (auto item = poll_one(a_, a_done_, cx)) return std::move(*item);
    } else {
      if (auto item = poll_one(a_, a_done_, cx)) return std::move(*item);
      if (auto item = poll_one(b_, b_done_, cx)) return std::move(*item);
    }
    if (a_done_ && b_done_) return stream_end;
    return pending;
  }

 private:
  // An item of `side`, or nothing when it is Pending or ended.
  template <class Side>
  static std::optional<Poll<std::optional<Item>>> poll_one(Side & side, bool& done, Context& cx) {
    if (done) return std::nullopt;
    auto item = side.poll_next(cx);
    if (item.is_pending()) return std::nullopt;
    if (!item.value()) {
      done = true;
      return std::nullopt;
    }
    return std::optional<Poll<std::optional<Item>>>(std::move(item));
  }

  A a_;
  B b_;
  bool a_done_ = false;
  bool b_done_ = false;
  bool b_first_ = true;
};

}  // namespace stream

/// The items of `a` and `b` interleaved as they come.
template <Stream A, Stream B>
stream::Merge<A, B> merge(A a, B b) {
  return stream::Merge<A, B>(std::move(a), std::move(b));
}

/// `a | merge(b)`.
template <Stream B>
auto merge(B b) {
  return stream_pipe([b = std::move(b)]<Stream A>(A a) mutable { return merge(std::move(a), std::move(b)); });
}

}  // namespace pollux
