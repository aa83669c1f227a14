// unfold(state, fn): a stream built from a state. fn(state) returns a
// future of std::optional<std::pair<Item, State>>: an item and the next
// state, or nullopt to end the stream (futures-rs's stream::unfold). At
// most one step runs at a time: the next starts when the consumer asks for
// the next item. Cancellation: destroying the stream destroys the running
// step, and with it the state it was given.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {

namespace detail {
template <class Opt>
struct UnfoldStep;
template <class Item, class State>
struct UnfoldStep<std::optional<std::pair<Item, State>>> {
  using item = Item;
};
}  // namespace detail

namespace stream {

/// The stream unfold(state, fn) returns.
template <class State, class Fn>
requires Future<std::invoke_result_t<Fn&, State&&>>
class [[nodiscard("streams do nothing unless polled")]] Unfold {
  using Step = std::invoke_result_t<Fn&, State&&>;

 public:
  using Item = typename pollux::detail::UnfoldStep<output_t<Step>>::item;

  /// What unfold() makes; call that instead.
  Unfold(State state, Fn fn) : state_(std::in_place_index<kIdle>, std::move(state)), fn_(std::move(fn)) {}

  /// The next item fn's future makes from the state; the end when it gives nullopt.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (state_.index() == kIdle) {
      State state = std::move(std::get<kIdle>(state_));
      state_.template emplace<kStepping>(fn_(std::move(state)));
    }
    if (state_.index() == kDone) return stream_end;
    auto step = std::get<kStepping>(state_).poll(cx);
    if (step.is_pending()) return pending;
    auto next = std::move(step).value();
    if (!next) {
      state_.template emplace<kDone>();
      return stream_end;
    }
    auto& [item, state] = *next;
    Item out = std::move(item);
    state_.template emplace<kIdle>(std::move(state));
    return ready(std::move(out));
  }

 private:
  static constexpr std::size_t kIdle = 0, kStepping = 1, kDone = 2;
  std::variant<State, Step, std::monostate> state_;
  Fn fn_;
};

}  // namespace stream

/// A stream that runs `fn(state)` for each item (see the header).
template <class State, class Fn>
stream::Unfold<State, Fn> unfold(State state, Fn fn) {
  return stream::Unfold<State, Fn>(std::move(state), std::move(fn));
}

}  // namespace pollux
