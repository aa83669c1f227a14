// try_join_all(range): runs a range of fallible futures concurrently (see
// try_join for the output kinds), and is Ready with every value in input
// order, as Result<std::vector<T>, E> or std::optional<std::vector<T>>,
// or with the first failure as soon as one fails, the others then
// destroyed at once (cancelled, rule 5). O(1) per wake-up: the futures run
// in a FuturesUnordered, each with a waker of its own.
// Cancellation: destroying it destroys every future and the values so far.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>
#include <iterator>
#include <optional>
#include <ranges>
#include <utility>
#include <vector>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/future/detail/collect_futures.hpp"
#include "pollux/future/detail/try_output.hpp"
#include "pollux/stream/futures_ordered.hpp"
#include "pollux/stream/futures_unordered.hpp"

namespace pollux {

/// What try_join_all(range) returns: runs a range of fallible futures concurrently (see try_join
/// for the output kinds), and is Ready with every value in input order, as Result<std::vector<T>,
/// E> or std::optional<std::vector<T>>, or with the first failure as soon as one fails, the others
/// then destroyed at once (cancelled, rule 5).
template <Future F>
requires detail::TryOutput<output_t<F>>::kFallible class [[nodiscard("futures do nothing unless polled")]] TryJoinAll {
  using Try = detail::TryOutput<output_t<F>>;
  using Value = typename Try::Value;

 public:
  using Output = typename Try::template Whole<std::vector<Value>>;

  /// What try_join_all(range) makes over `futures`.
  explicit TryJoinAll(std::vector<F> futures) : values_(futures.size()) {
    std::uint64_t index = 0;
    for (auto& f : futures) running_.push(detail::Indexed<F>(std::move(f), index++));
  }

  /// Polls the children that were woken; Ready with every value once all succeeded, or with the
  /// first error as soon as one fails.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(TryJoinAll, !done_);
    for (;;) {
      auto next = running_.poll_next(cx);
      if (next.is_pending()) return pending;
      if (!next.value()) break;  // every future succeeded
      auto& [index, out] = *next.value();
      if (Try::failed(out)) {
        done_ = true;
        running_.clear();  // the others are cancelled now
        return Poll<Output>(std::in_place, Try::template fail<std::vector<Value>>(Try::failure(std::move(out))));
      }
      values_[index].emplace(Try::value(std::move(out)));
    }
    done_ = true;
    std::vector<Value> values;
    values.reserve(values_.size());
    for (auto& v : values_) values.push_back(std::move(*v));
    return Poll<Output>(std::in_place, Output(std::move(values)));
  }

 private:
  FuturesUnordered<detail::Indexed<F>> running_;
  std::vector<std::optional<Value>> values_;  // by input index, as they come
  bool done_ = false;
};

/// Runs the futures of `range` concurrently until all succeeded or one failed.
template <std::ranges::input_range R>
requires Future<std::ranges::range_value_t<R>> TryJoinAll<std::ranges::range_value_t<R>> try_join_all(R&& range) {
  return TryJoinAll<std::ranges::range_value_t<R>>(detail::collect_futures(std::forward<R>(range)));
}

}  // namespace pollux
