// Poll<T>: the answer of every `poll` call, either Ready(value) or Pending.
// `pending` converts to any Poll<T>; `ready(v)` makes a Poll of v's type, and
// a Poll<U> converts to a Poll<T> when a U converts to a T. Poll<void> is the
// answer of a future that produces no value (it contributes Unit to tuples).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cassert>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

namespace pollux {

/// The value of a future with no result, where a value is needed (join's
/// tuple, select's variant).
struct Unit {
  friend constexpr bool operator==(Unit, Unit) noexcept = default;
};

/// Tag that converts to any Poll<T> in its Pending state: `return pending;`.
struct Pending {
  explicit constexpr Pending() = default;
};
/// The Pending answer of any poll: `return pending;`.
inline constexpr Pending pending{};

/// The answer of a poll: Ready with a T, or Pending. [[nodiscard]]: a poll's
/// answer must be looked at.
template <class T>
class [[nodiscard]] Poll {
 public:
  /// The type of the value a Ready poll carries.
  using value_type = T;

  /// Pending: what `return pending;` makes.
  constexpr Poll(Pending) noexcept {}  // NOLINT: implicit by design

  /// Ready, with a T made from `args` in place.
  template <class... Args>
  constexpr explicit Poll(std::in_place_t, Args&&... args) : value_(std::in_place, std::forward<Args>(args)...) {}

  /// A `Poll<U>` as a `Poll<T>`, when a T can be made from a U: `Poll<int>` from
  /// `ready(short{1})`, `Poll<std::optional<T>>` from `ready(T)`, ...
  template <class U>
  requires(!std::is_same_v<U, T> && std::is_constructible_v<T, U&&>) constexpr Poll(
      Poll<U>&& other) {  // NOLINT: implicit by design
    if (other.is_ready()) value_.emplace(std::move(other).value());
  }

  /// True when the future finished and the value is here.
  constexpr bool is_ready() const noexcept { return value_.has_value(); }
  /// True when the future is not finished yet.
  constexpr bool is_pending() const noexcept { return !value_.has_value(); }

  /// The value of a Ready poll (checked by assert in debug builds).
  constexpr T& value() & noexcept {
    assert(is_ready() && "Poll::value() on Pending");
    return *value_;
  }
  /// The value of a Ready poll (checked by assert in debug builds).
  constexpr const T& value() const& noexcept {
    assert(is_ready() && "Poll::value() on Pending");
    return *value_;
  }
  /// Moves the value of a Ready poll out (checked by assert in debug builds).
  constexpr T&& value() && noexcept {
    assert(is_ready() && "Poll::value() on Pending");
    return std::move(*value_);
  }

  /// Ready(fn(value)) or Pending.
  template <class Fn>
  constexpr auto map(Fn&& fn) && -> Poll<std::invoke_result_t<Fn, T&&>>;

 private:
  std::optional<T> value_;
};

/// The answer of a future with no value: Ready or Pending, nothing more.
template <>
class [[nodiscard]] Poll<void> {
 public:
  /// No value: void.
  using value_type = void;

  /// Pending: what `return pending;` makes.
  constexpr Poll(Pending) noexcept {}  // NOLINT: implicit by design
  /// Ready: what `return ready();` makes.
  constexpr explicit Poll(std::in_place_t) noexcept : ready_(true) {}

  /// True when the future finished.
  constexpr bool is_ready() const noexcept { return ready_; }
  /// True when the future is not finished yet.
  constexpr bool is_pending() const noexcept { return !ready_; }
  /// Nothing to return; asserts (in debug builds) that the poll is Ready.
  constexpr void value() const noexcept { assert(ready_ && "Poll::value() on Pending"); }

 private:
  bool ready_ = false;
};

/// A Ready poll of `value`: `return ready(42);`.
template <class T>
constexpr Poll<std::decay_t<T>> ready(T&& value) {
  return Poll<std::decay_t<T>>(std::in_place, std::forward<T>(value));
}

/// A Ready Poll<void>: `return ready();`.
constexpr Poll<void> ready() noexcept { return Poll<void>(std::in_place); }

/// Ready(fn(value)) or Pending.
template <class T>
template <class Fn>
constexpr auto Poll<T>::map(Fn&& fn) && -> Poll<std::invoke_result_t<Fn, T&&>> {
  using U = std::invoke_result_t<Fn, T&&>;
  if (is_pending()) return pending;
  if constexpr (std::is_void_v<U>) {
    std::invoke(std::forward<Fn>(fn), std::move(*value_));
    return ready();
  } else {
    return Poll<U>(std::in_place, std::invoke(std::forward<Fn>(fn), std::move(*value_)));
  }
}

/// T, or Unit for void: the type a value of output T has in a tuple or variant.
template <class T>
using unit_if_void_t = std::conditional_t<std::is_void_v<T>, Unit, T>;

}  // namespace pollux
