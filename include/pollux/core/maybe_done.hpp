// MaybeDone<F>: a child future, then its output, then nothing: the slot that
// join and join_all keep per child. It stops polling a child as soon as it
// is Ready (rule 3) and holds the output until the parent collects it.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <utility>
#include <variant>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"

namespace pollux {

/// A child future, then its output, then nothing: the slot that join and join_all keep per child.
template <Future F>
class MaybeDone {
 public:
  /// The output, with Unit for void.
  using Value = unit_if_void_t<output_t<F>>;

  /// Holds `future` until it is Ready, then its output.
  explicit MaybeDone(F future) : state_(std::in_place_index<kFuture>, std::move(future)) {}

  /// Polls the child if it still runs; true once its output is here.
  bool poll(Context& cx) {
    if (state_.index() != kFuture) {
      POLLUX_CHECK_NOT_DONE(MaybeDone, state_.index() == kDone);
      return true;
    }
    Poll<Value> p = poll_unit(std::get<kFuture>(state_), cx);
    if (p.is_pending()) return false;
    // Destroys the child right away: its registrations go with it (rule 5).
    state_.template emplace<kDone>(std::move(p).value());
    return true;
  }

  /// True once the output is here (or was taken).
  bool is_done() const noexcept { return state_.index() == kDone; }

  /// The output, left in place.
  const Value& peek() const { return std::get<kDone>(state_); }

  /// Moves the output out; the slot is empty afterwards.
  Value take() {
    Value value = std::move(std::get<kDone>(state_));
    state_.template emplace<kTaken>();
    return value;
  }

 private:
  static constexpr std::size_t kFuture = 0, kDone = 1, kTaken = 2;
  std::variant<F, Value, std::monostate> state_;
};

}  // namespace pollux
