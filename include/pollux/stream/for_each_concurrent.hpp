// for_each_concurrent(stream, limit, fn): a future that runs the future
// fn(item) for every item, up to `limit` at once (0: no limit), and is
// Ready when the stream ended and every one of them finished. They run in
// a FuturesUnordered whose nodes are reused, so nothing is allocated per
// item once `limit` ran. An exception from one of them propagates (rule 7)
// and the others are destroyed with the future.
// Pipe form: `s | for_each_concurrent(limit, fn)`.
// Cancellation: destroying it destroys every running future.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <functional>
#include <limits>
#include <type_traits>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/stream/futures_unordered.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The future for_each_concurrent(s, limit, fn) returns.
template <Stream S, class Fn>
requires Future<std::invoke_result_t<Fn&, item_t<S> &&>> class [[nodiscard(
    "futures do nothing unless polled")]] ForEachConcurrent {
  using Step = std::invoke_result_t<Fn&, item_t<S>&&>;

 public:
  using Output = void;

  /// What for_each_concurrent() makes; call that instead.
  ForEachConcurrent(S source, std::size_t limit, Fn fn)
      : source_(std::move(source)),
        fn_(std::move(fn)),
        limit_(limit == 0 ? std::numeric_limits<std::size_t>::max() : limit) {
    running_.set_spare_nodes(limit == 0 ? 64 : limit);
  }

  /// Starts fn's future for each item, up to the limit at once; Ready once the stream ended and
  /// every future finished.
  Poll<void> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(ForEachConcurrent, !done_);
    for (;;) {
      bool made_progress = false;
      while (!source_done_ && running_.size() < limit_) {
        auto item = source_.poll_next(cx);
        if (item.is_pending()) break;
        if (!item.value()) {
          source_done_ = true;
          break;
        }
        running_.push(std::invoke(fn_, std::move(*item.value())));
      }
      // Drain every finished step: each one frees a slot for the source.
      while (!running_.empty()) {
        auto out = running_.poll_next(cx);
        if (out.is_pending()) break;
        made_progress = true;
      }
      if (source_done_ && running_.empty()) {
        done_ = true;
        return ready();
      }
      if (!made_progress || source_done_) return pending;
    }
  }

 private:
  S source_;
  Fn fn_;
  FuturesUnordered<Step> running_;
  std::size_t limit_;
  bool source_done_ = false;
  bool done_ = false;
};

}  // namespace stream

/// Runs the futures `fn(item)` for each item of `source`, `limit` at once.
template <Stream S, class Fn>
requires Future<std::invoke_result_t<Fn&, item_t<S> &&>> stream::ForEachConcurrent<S, Fn> for_each_concurrent(
    S source, std::size_t limit, Fn fn) {
  return stream::ForEachConcurrent<S, Fn>(std::move(source), limit, std::move(fn));
}

/// `s | for_each_concurrent(limit, fn)`.
template <class Fn>
auto for_each_concurrent(std::size_t limit, Fn fn) {
  return stream_pipe([limit, fn = std::move(fn)]<Stream S>(S source) mutable {
    if constexpr (!std::invocable<Fn&, item_t<S>&&>) {
      static_assert(detail::kFalse<S>,
                    "pollux: `stream | for_each_concurrent(n, fn)`: fn cannot take the stream's items");
      return detail::Misused{};
    } else if constexpr (!Future<std::invoke_result_t<Fn&, item_t<S>&&>>) {
      static_assert(detail::kFalse<S>, "pollux: `stream | for_each_concurrent(n, fn)`: fn must return a future");
      return detail::Misused{};
    } else {
      return for_each_concurrent(std::move(source), limit, std::move(fn));
    }
  });
}

}  // namespace pollux
