// Sink<S, Item>: the writing twin of Stream, futures-rs's Sink. A sink takes
// items in three steps so that a caller never holds an item it cannot
// place: poll_ready (room for one more?), start_send (place it, no waiting),
// poll_flush (Ready once everything placed has gone on), and poll_close
// (flush, then end). The poll_* steps keep the contract of poll: Pending
// stores the waker of that poll (rule 2). Failure is a Result whose error
// type is the sink's `Error`.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <type_traits>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/result.hpp"

namespace pollux {

/// The steps every sink has, whatever it takes: `S::Error`, poll_ready,
/// poll_flush and poll_close (what flush() and close() need).
template <class S>
concept BasicSink = std::is_object_v<S> && requires(S& sink, Context& cx) {
  typename S::Error;
  { sink.poll_ready(cx) } -> std::same_as<Poll<Result<void, typename S::Error>>>;
  { sink.poll_flush(cx) } -> std::same_as<Poll<Result<void, typename S::Error>>>;
  { sink.poll_close(cx) } -> std::same_as<Poll<Result<void, typename S::Error>>>;
};

/// A sink of `Item`s: a BasicSink with start_send(item). start_send is only
/// called after poll_ready answered Ready with success, once per such answer.
template <class S, class Item>
concept Sink = BasicSink<S> && requires(S& sink, Item&& item) {
  { sink.start_send(static_cast<Item&&>(item)) } -> std::same_as<Result<void, typename S::Error>>;
};

/// What a sink's steps fail with.
template <class S>
using sink_error_t = typename S::Error;

}  // namespace pollux
