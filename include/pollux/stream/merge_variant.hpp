// merge_variant(s1, s2, ...): a fair merge of streams of different types
// into one stream of std::variant<item_t<S1>, item_t<S2>, ...> (the index
// says which stream an item came from), ending when every stream ended.
// Consumed by for_each or try_for_each, it is a select loop without a
// hand-written poll:
//
//   merge_variant(lines(reader), rx.into_stream(), interval(30s))
//     | try_for_each([&](auto event) {
//         return std::visit(Overloaded{[&](std::string line) { ... },
//                                      [&](Result<Message, RecvError> m) { ... },
//                                      [&](Instant tick) { ... }},
//                           std::move(event));
//       });
//
// (futures 0.1's style; Overloaded is the usual set-of-lambdas helper,
// examples/chat_server has one). The consumer is sequential: a step that
// waits holds back every source, timers and shutdown included, so a step
// should only queue its output (examples/mini_redis feeds a bounded
// channel that a writer future drains), never wait on a slow peer. To see
// one source end while the others go on, merge `source | with_end()`. A
// collection (StreamMap, JoinSet, FuturesUnordered, FuturesOrdered, or
// by_ref of one) ends while it is empty, yet a step may fill it again:
// such a RefillableStream is polled again on every poll and never counts
// as ended, and the merge ends only when every other source ended and the
// collections are empty. A step that returns an error ends the loop;
// take_until on the merged stream ends it on an outside event. Fair: each
// poll_next starts with the next stream after the one it started with
// last. Two streams of one item type give a variant with that type twice:
// use the index. Cancellation: nothing is buffered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <array>
#include <cstddef>
#include <optional>
#include <tuple>
#include <utility>
#include <variant>

#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream merge_variant(ss...) returns.
template <Stream... Ss>
class [[nodiscard("streams do nothing unless polled")]] MergeVariant {
  static_assert(sizeof...(Ss) > 0, "merge_variant needs at least one stream");
  static constexpr std::size_t kCount = sizeof...(Ss);

 public:
  using Item = std::variant<item_t<Ss>...>;

  /// What merge_variant() makes; call that instead.
  explicit MergeVariant(Ss... streams) : streams_(std::move(streams)...) {}

  /// The next item of any source, as the variant's alternative of that source; the end once every
  /// source ended (and every refillable one is empty).
  Poll<std::optional<Item>> poll_next(Context & cx) {
    const std::size_t start = start_;
    start_ = start_ + 1 == kCount ? 0 : start_ + 1;
    std::optional<Item> item;
    std::size_t empty_collections = 0;  // refillable sources that are empty right now
    for (std::size_t k = 0; k < kCount && !item; ++k) {
      std::size_t i = start + k;
      if (i >= kCount) i -= kCount;
      poll_one(i, cx, item, empty_collections, std::index_sequence_for<Ss...>{});
    }
    if (item) return ready(std::move(*item));
    if (ended_ + empty_collections == kCount) return stream_end;
    return pending;
  }

 private:
  template <std::size_t... I>
  void poll_one(std::size_t i, Context & cx, std::optional<Item> & item, std::size_t & empty_collections,
                std::index_sequence<I...>) {
    ((I == i ? poll_stream<I>(cx, item, empty_collections) : void()), ...);
  }

  template <std::size_t I>
  void poll_stream(Context & cx, std::optional<Item> & item, std::size_t & empty_collections) {
    using S = std::tuple_element_t<I, std::tuple<Ss...>>;
    if (done_[I]) return;
    auto next = std::get<I>(streams_).poll_next(cx);
    if (next.is_pending()) return;
    if (!next.value()) {
      if constexpr (RefillableStream<S>) {
        ++empty_collections;  // ended for now; a step may insert into it
      } else {
        done_[I] = true;
        ++ended_;
      }
      return;
    }
    item.emplace(std::in_place_index<I>, std::move(*next.value()));
  }

  std::tuple<Ss...> streams_;
  std::array<bool, kCount> done_{};
  std::size_t ended_ = 0;
  std::size_t start_ = 0;
};

}  // namespace stream

/// One stream of the items of every stream given, as variants.
template <Stream... Ss>
stream::MergeVariant<Ss...> merge_variant(Ss... streams) {
  return stream::MergeVariant<Ss...>(std::move(streams)...);
}

}  // namespace pollux
