// FutureSlot<F>: the member a hand-written future keeps a child in while it
// is in flight: started (emplaced) when the state machine gets to it,
// polled, and empty again the moment it is Ready, so the child is never
// polled after Ready (rule 3) and its registrations go with it (rule 5).
// The slot is not moved while it holds a polled child (rule 4).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <optional>
#include <stdexcept>
#include <utility>

#include "pollux/core/future.hpp"

namespace pollux {

/// An optional child future that empties itself when it completes.
template <Future F>
class FutureSlot {
 public:
  /// An empty slot.
  FutureSlot() noexcept = default;

  /// True while a child is in flight.
  bool in_flight() const noexcept { return child_.has_value(); }

  /// Starts `child` in the slot, dropping (cancelling) any child before it.
  F& start(F child) { return child_.emplace(std::move(child)); }
  /// Drops the child in flight, which cancels it.
  void cancel() noexcept { child_.reset(); }

  /// Polls the child in flight; Ready leaves the slot empty. An empty slot
  /// is a std::logic_error: start a child first.
  Poll<output_t<F>> poll(Context& cx) {
    if (!child_) throw std::logic_error("pollux::FutureSlot: polled with no future in flight");
    Poll<output_t<F>> result = child_->poll(cx);
    if (result.is_ready()) child_.reset();
    return result;
  }
  /// Starts make() when the slot is empty, then polls the child: the
  /// emplace-poll-reset steps of a hand-written poll in one call.
  template <class Make>
  requires std::same_as<std::invoke_result_t<Make&>, F> Poll<output_t<F>> poll(Context& cx, Make&& make) {
    if (!child_) child_.emplace(make());
    return poll(cx);
  }

 private:
  std::optional<F> child_;
};

}  // namespace pollux
