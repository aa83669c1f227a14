// map(f, fn): a future of fn(output of f). fn runs on the poll that finds f
// Ready, on the polling thread. Cancellation: destroying a Map destroys f.
// Pipe form: `f | map(fn)`.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/diagnose.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/pipe.hpp"

namespace pollux {

namespace detail {
/// fn(value), or fn() for a future with no value.
template <class Fn, class P>
decltype(auto) invoke_with_output(Fn&& fn, P&& poll) {
  if constexpr (std::is_void_v<typename std::decay_t<P>::value_type>) {
    return std::invoke(std::forward<Fn>(fn));
  } else {
    return std::invoke(std::forward<Fn>(fn), std::move(poll).value());
  }
}

/// Whether fn takes what a future of T is Ready with (nothing for void).
template <class Fn, class T>
inline constexpr bool kTakesOutput = std::is_invocable_v<Fn&&, T&&>;
template <class Fn>
inline constexpr bool kTakesOutput<Fn, void> = std::is_invocable_v<Fn&&>;

template <class Fn, class T>
struct MapResult {
  using type = std::invoke_result_t<Fn&&, T&&>;
};
template <class Fn>
struct MapResult<Fn, void> {
  using type = std::invoke_result_t<Fn&&>;
};
}  // namespace detail

/// What map(f, fn) returns: a future of fn(output of f).
template <Future F, class Fn>
class [[nodiscard("futures do nothing unless polled")]] Map {
 public:
  using Output = typename detail::MapResult<Fn, output_t<F>>::type;

  /// What map(f, fn) makes.
  Map(F future, Fn fn) : fn_(std::move(fn)), future_(std::move(future)) {}

  /// Polls the inner future; once it is Ready, calls fn on its output and is Ready with that.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Map, fn_.has_value());
    auto inner = future_.poll(cx);
    if (inner.is_pending()) return pending;
    Fn fn = std::move(*fn_);
    fn_.reset();  // fn runs once; an empty fn_ is the Done state
    if constexpr (std::is_void_v<Output>) {
      detail::invoke_with_output(std::move(fn), std::move(inner));
      return ready();
    } else {
      return Poll<Output>(std::in_place, detail::invoke_with_output(std::move(fn), std::move(inner)));
    }
  }

 private:
  // fn_ first, so the future is destroyed before fn (as futures-rs drops
  // them): a future may borrow what fn's captures keep alive.
  std::optional<Fn> fn_;
  F future_;
};

/// A future of fn(output of `future`); fn() for a future of void.
template <Future F, class Fn>
auto map(F future, Fn fn) {
  // Checked here too, not only in the pipe form: the call form's mistake
  // gets the same one-line message instead of a page from <type_traits>.
  if constexpr (detail::kTakesOutput<Fn, output_t<F>>) {
    return Map<F, Fn>(std::move(future), std::move(fn));
  } else {
    static_assert(detail::kFalse<F>, "pollux: `map(f, fn)`: fn cannot take f's output (fn() for a future of void)");
    return detail::Misused{};
  }
}

/// What map(f, fn) returns: a future of fn(output of f).
template <class Fn>
struct MapAdaptor : PipeAdaptor {
  /// The function map(fn) was given.
  Fn fn;
};

/// The pipe form: `future | map(fn)`.
template <class Fn>
requires(!Future<Fn>) MapAdaptor<Fn> map(Fn fn) { return {{}, std::move(fn)}; }

/// `future | map(fn)` is map(future, fn).
template <Future F, class Fn>
auto pipe_into(F future, MapAdaptor<Fn> adaptor) {
  if constexpr (detail::kTakesOutput<Fn, output_t<F>>) {
    return Map<F, Fn>(std::move(future), std::move(adaptor.fn));
  } else {
    static_assert(detail::kFalse<F>,
                  "pollux: `future | map(fn)`: fn cannot take the future's output (fn() for a future of void)");
    return detail::Misused{};
  }
}

}  // namespace pollux
