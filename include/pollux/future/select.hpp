// select(fs...): polls every future until one is Ready, and is Ready with a
// std::variant whose index names the winner. The losers are destroyed the
// moment the winner is found, which cancels them (rule 5).
// Fair by default: each poll starts with a different child (rotating), so
// children that are always ready win in turn. select_biased polls in
// argument order, for when the order is a priority.
// Cancellation safety: a loser loses whatever it had not yet returned. A
// future whose value must survive a lost race (a channel receive, an
// accept) is passed as by_ref(f), so only the reference is destroyed.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <optional>
#include <tuple>
#include <utility>
#include <variant>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/diagnose.hpp"
#include "pollux/core/detail/thread_context.hpp"
#include "pollux/core/future.hpp"

namespace pollux {

/// Which child a select polls first: Fair (a rotating start) or Biased
/// (argument order, so the first argument wins ties).
enum class SelectOrder { Fair, Biased };

namespace detail {
/// The future layer's per-thread field: where the next fair select starts.
struct SelectThreadContext {
  /// Advanced by each fair poll; its value picks the first child.
  std::size_t rotation = 0;
};

/// Where a fair combinator starts polling: a per-thread counter that each
/// fair poll advances. Cheaper than a random number and just as fair for
/// children that are ready together.
inline std::size_t next_select_start() noexcept { return per_thread<SelectThreadContext>.rotation++; }
}  // namespace detail

/// What select(fs...) returns: polls every future until one is Ready, and is Ready with a
/// std::variant whose index names the winner.
template <SelectOrder Order, Future... Fs>
class [[nodiscard("futures do nothing unless polled")]] Select {
  static_assert(sizeof...(Fs) > 0, "select needs at least one future");

 public:
  using Output = std::variant<unit_if_void_t<output_t<Fs>>...>;

  /// What select(fs...) or select_biased(fs...) makes.
  explicit Select(Fs... futures) : children_(std::in_place, std::move(futures)...) {}

  /// Polls the children in turn; Ready with the first output, in the variant's alternative of
  /// its child, as soon as one is Ready (the others are destroyed).
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Select, children_.has_value());
    constexpr std::size_t n = sizeof...(Fs);
    const std::size_t start = Order == SelectOrder::Fair ? detail::next_select_start() % n : 0;
    std::optional<Output> winner;
    for (std::size_t k = 0; k < n && !winner; ++k) {
      std::size_t i = start + k;
      if (i >= n) i -= n;
      poll_child(i, cx, winner, std::index_sequence_for<Fs...>{});
    }
    if (!winner) return pending;
    children_.reset();  // the losers are cancelled now, not when the Select goes
    return Poll<Output>(std::in_place, std::move(*winner));
  }

 private:
  template <std::size_t... I>
  void poll_child(std::size_t i, Context & cx, std::optional<Output> & winner, std::index_sequence<I...>) {
    ((I == i ? poll_one<I>(cx, winner) : void()), ...);
  }

  template <std::size_t I>
  void poll_one(Context & cx, std::optional<Output> & winner) {
    auto p = poll_unit(std::get<I>(*children_), cx);
    if (p.is_ready()) winner.emplace(std::in_place_index<I>, std::move(p).value());
  }

  std::optional<std::tuple<Fs...>> children_;
};

namespace detail {
/// select's futures, taken by value: Select<Order, Fs...>, or a diagnostic
/// for an argument that is not a future or that would have to be copied.
template <SelectOrder Order, class... Fs>
auto make_select(Fs&&... futures) {
  if constexpr (!(Future<std::remove_cvref_t<Fs>> && ...)) {
    (not_a_future_if_not<std::remove_cvref_t<Fs>>(), ...);
    return Misused{};
  } else if constexpr (!(std::is_constructible_v<std::remove_cvref_t<Fs>, Fs&&> && ...)) {
    static_assert(kFalse<Fs...>,
                  "pollux::select takes its futures by value, and one of them cannot be copied: std::move(f) to "
                  "give it away, or by_ref(f) to keep f and poll it again after the select");
    return Misused{};
  } else {
    return Select<Order, std::remove_cvref_t<Fs>...>(std::forward<Fs>(futures)...);
  }
}
}  // namespace detail

/// Waits for the first of `futures`: Ready with a variant whose index says
/// which; the others are destroyed (cancelled). Fair: the first child polled rotates.
template <class... Fs>
auto select(Fs&&... futures) {
  return detail::make_select<SelectOrder::Fair>(std::forward<Fs>(futures)...);
}

/// select() that always polls in argument order.
template <class... Fs>
auto select_biased(Fs&&... futures) {
  return detail::make_select<SelectOrder::Biased>(std::forward<Fs>(futures)...);
}

}  // namespace pollux
