// lazy(fn): a future that calls fn on its first poll and is Ready with its
// result; nothing runs until someone polls. Cancelling it before the first
// poll means fn never runs.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"

namespace pollux {

/// What lazy(fn) returns: a future that calls fn on its first poll and is Ready with its result;
template <class Fn>
class [[nodiscard("futures do nothing unless polled")]] Lazy {
 public:
  using Output = std::invoke_result_t<Fn&&>;

  /// What lazy(fn) makes.
  explicit Lazy(Fn fn) : fn_(std::move(fn)) {}

  /// Calls fn on the first poll and is Ready with what it returns.
  Poll<Output> poll(Context&) {
    POLLUX_CHECK_NOT_DONE(Lazy, fn_.has_value());
    Fn fn = std::move(*fn_);
    fn_.reset();
    if constexpr (std::is_void_v<Output>) {
      std::invoke(std::move(fn));
      return ready();
    } else {
      return Poll<Output>(std::in_place, std::invoke(std::move(fn)));
    }
  }

 private:
  std::optional<Fn> fn_;
};

/// A future that calls fn() on its first poll and is Ready with its result.
template <class Fn>
Lazy<Fn> lazy(Fn fn) {
  return Lazy<Fn>(std::move(fn));
}

}  // namespace pollux
