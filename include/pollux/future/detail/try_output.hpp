// What try_join and try_join_all read from a child's output: whether it
// failed, its value, and the failure to pass on. Two kinds of output are
// fallible: Result<T, E> (the failure is the error E) and std::optional<T>
// (the failure is nullopt).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "pollux/core/poll.hpp"
#include "pollux/core/result.hpp"

namespace pollux::detail {

template <class O>
struct TryOutput {
  static constexpr bool kFallible = false;
};

template <class T, class E>
struct TryOutput<Result<T, E>> {
  static constexpr bool kFallible = true;
  using Value = unit_if_void_t<T>;
  // The output of the whole when every child succeeded with these values.
  template <class V>
  using Whole = Result<V, E>;
  using Failure = E;

  static bool failed(const Result<T, E>& r) noexcept { return !r.has_value(); }
  static Value value(Result<T, E>&& r) {
    if constexpr (std::is_void_v<T>)
      return Unit{};
    else
      return std::move(r).value();
  }
  static E failure(Result<T, E>&& r) { return std::move(r.error()); }
  template <class V>
  static Whole<V> fail(E&& e) {
    return Whole<V>(std::move(e));
  }
};

// The failure of an optional output (the same for every T).
struct NoValue {};

template <class T>
struct TryOutput<std::optional<T>> {
  static constexpr bool kFallible = true;
  using Value = T;
  template <class V>
  using Whole = std::optional<V>;
  using Failure = NoValue;

  static bool failed(const std::optional<T>& o) noexcept { return !o.has_value(); }
  static Value value(std::optional<T>&& o) { return std::move(*o); }
  static Failure failure(std::optional<T>&&) noexcept { return {}; }
  template <class V>
  static Whole<V> fail(Failure&&) {
    return std::nullopt;
  }
};

// Children fail alike: all Results with one error type, or all optionals.
template <class... Os>
concept SameFailure = (TryOutput<Os>::kFallible && ...) && requires {
  typename std::tuple<typename TryOutput<Os>::Failure...>;
}
&&(std::is_same_v<typename TryOutput<Os>::template Whole<int>,
                  typename TryOutput<std::tuple_element_t<0, std::tuple<Os...>>>::template Whole<int>>&&...);

}  // namespace pollux::detail
