// What a misused entry point says: a static_assert in pollux's words, then
// nothing more. Each check is written so that the assertion is the first
// error and the code after it instantiates nothing that fails again (a
// misused combinator returns Misused, a future of nothing), so that a
// mistake costs a few lines of compiler output, not a screenful.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <type_traits>

#include "pollux/core/future.hpp"

namespace pollux::detail {

/// False, for a static_assert that must fail only once instantiated.
template <class...>
inline constexpr bool kFalse = false;

/// What a combinator returns after its static_assert failed: a future of
/// itself, and `x | adaptor` passes it through, so that code using the
/// result adds as few errors of its own as it can. Never polled: a program
/// that holds one does not compile.
struct Misused {
  using Output = Misused;
  Poll<Misused> poll(Context&);
  template <class T>
  operator T() const;  // NOLINT: converts to whatever the caller expected, so that is no second error
};

/// Fails to compile with what T is instead of a future (a stream, a
/// function, or anything else). Called only when T is not a Future.
template <class T>
constexpr void not_a_future() {
  if constexpr (requires(T & t, Context & cx) { t.poll_next(cx); }) {
    static_assert(kFalse<T>,
                  "pollux: a stream is not a future: await its next item with next(s), or consume it with "
                  "s | collect(), s | for_each(fn) or s | fold(init, fn)");
  } else if constexpr (std::is_invocable_v<T&>) {
    static_assert(kFalse<T>, "pollux: a function is not a future: lazy(fn) is the future that calls it when polled");
  } else {
    static_assert(kFalse<T>,
                  "pollux: not a future: a future has `using Output = ...;` and `Poll<Output> poll(Context&)`");
  }
}

/// not_a_future<T>() when T is not a Future; nothing when it is.
template <class T>
constexpr void not_a_future_if_not() {
  if constexpr (!Future<T>) not_a_future<T>();
}

}  // namespace pollux::detail
