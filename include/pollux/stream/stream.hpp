// Stream: an asynchronous sequence, `Poll<std::optional<Item>>
// poll_next(Context&)` (nullopt: the stream ended). The same rules as
// futures apply to each poll_next (rule 2: Pending stores the waker), and a
// stream is not polled again after it ended, unless it is fused (fuse()).
// next(stream) is a future of the next item that borrows the stream.
// Adapters compose by pipe: `iter(v) | map(fn) | filter(pred) | fold(0, add)`;
// the right-hand side of each `|` is a StreamPipe.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <optional>
#include <type_traits>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/diagnose.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/pipe.hpp"

namespace pollux {

template <class S>
concept Stream = std::is_object_v<S> && requires(S& s, Context& cx) {
  typename S::Item;
  { s.poll_next(cx) } -> std::same_as<Poll<std::optional<typename S::Item>>>;
};

/// The type of a stream's items.
template <Stream S>
using item_t = typename S::Item;

/// A collection stream (StreamMap, JoinSet, FuturesUnordered, FuturesOrdered): it ends while it
/// is empty and may be polled again once something is inserted, when it yields again. Such a
/// type says so with `static constexpr bool refillable = true;`; merge_variant keeps polling
/// a refillable source after it ended, so a loop over a momentarily empty set goes on.
template <class S>
concept RefillableStream = Stream<S> && requires {
  requires S::refillable;
};

/// The end of a stream, as a poll_next answers it: `return stream_end;`
/// (Ready with nullopt, for any item type).
struct StreamEnd {
  /// Ready with nullopt, as any stream's poll_next answer.
  template <class T>
  constexpr operator Poll<std::optional<T>>() const {  // NOLINT: implicit by design
    return Poll<std::optional<T>>(std::in_place, std::nullopt);
  }
};
/// The end of a stream: `return stream_end;`.
inline constexpr StreamEnd stream_end{};

/// The right-hand side of `stream | adapter(args)`: remembers the arguments
/// and builds the adapted stream (or the consuming future) from the stream.
template <class Apply>
struct StreamPipe : PipeAdaptor {
  /// Makes the adapter from the source stream.
  Apply apply;
};

/// Makes a StreamPipe from a function of the stream.
template <class Apply>
StreamPipe<Apply> stream_pipe(Apply apply) {
  return StreamPipe<Apply>{{}, std::move(apply)};
}

/// `stream | adapter(args)` is `adapter(stream, args)`.
template <class S, class Apply>
auto pipe_into(S source, StreamPipe<Apply> pipe) {
  if constexpr (!Stream<S>) {
    static_assert(detail::kFalse<S>,
                  "pollux: `x | adapter`: this stream adapter takes a stream, and x is not one "
                  "(once(future) is a stream of the future's output)");
    return detail::Misused{};
  } else {
    return std::move(pipe.apply)(std::move(source));
  }
}

/// next(stream): Ready with the stream's next item (nullopt at its end).
// Cancellation safety: dropping a Next loses nothing; the stream keeps
// whatever it had not yet yielded.
template <Stream S>
class [[nodiscard("futures do nothing unless polled")]] Next {
 public:
  using Output = std::optional<item_t<S>>;

  /// What next() makes; call that instead.
  explicit Next(S & stream) noexcept : stream_(&stream) {}

  /// Ready with the stream's next item, or nullopt at its end.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Next, !done_);
    auto item = stream_->poll_next(cx);
    if (item.is_ready()) done_ = true;
    return item;
  }

 private:
  S* stream_;
  bool done_ = false;
};

/// The next item of `stream`, which must outlive the future.
template <Stream S>
Next<S> next(S& stream) noexcept {
  return Next<S>(stream);
}

/// next(stream) for a stream given by value: the future owns it, so "the
/// first item of this stream" needs no variable to borrow from
/// (`select(next(signal_a), next(signal_b))`). The rest of the stream is
/// dropped with the future.
template <Stream S>
class [[nodiscard("futures do nothing unless polled")]] NextOwned {
 public:
  /// The first item; nullopt when the stream ended without one.
  using Output = std::optional<item_t<S>>;

  /// What next(std::move(stream)) makes; call that instead.
  explicit NextOwned(S stream) : stream_(std::move(stream)) {}

  /// Polls the stream for its first item.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(NextOwned, !done_);
    auto item = stream_.poll_next(cx);
    if (item.is_ready()) done_ = true;
    return item;
  }

 private:
  S stream_;
  bool done_ = false;
};

/// The first item of `stream`, which the future owns.
template <Stream S>
requires(!std::is_lvalue_reference_v<S>) NextOwned<S> next(S&& stream) { return NextOwned<S>(std::move(stream)); }

}  // namespace pollux
