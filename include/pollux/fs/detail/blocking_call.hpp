// BlockingCall: the future of one blocking function (a path operation, a
// whole-file read) run on the runtime's blocking pool. Lazy, as every
// future: the function goes to the pool at the first poll, so a call made
// outside the runtime (`rt.block_on(fs::write(...))`) is fine. Destroyed
// while the function runs, it takes its waker back (rule 5); the function
// finishes on the pool with only what it owns (it borrows nothing).
// An operation that can often be done without waiting on the device (a
// small cached file) gives an `attempt` too: run first, on the caller's
// thread, it must never block (the kernel's RESOLVE_CACHED and RWF_NOWAIT
// say so), and its nullopt sends the call to the pool as before.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cerrno>
#include <optional>
#include <system_error>
#include <type_traits>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/try_ready.hpp"
#include "pollux/runtime/spawn_blocking.hpp"

namespace pollux::detail {

/// The attempt of a call that has none: always the pool.
struct NoAttempt {};

/// A future of fn() run on the current runtime's blocking pool; fn's
/// exceptions are rethrown, and a pool that shut down before fn ran is a
/// std::system_error (ECANCELED) naming `what`. With an Attempt, attempt()
/// runs first on the caller's thread; its value, if any, is the result.
template <class Fn, class Attempt = NoAttempt>
class [[nodiscard("futures do nothing unless polled")]] BlockingCall {
 public:
  using Output = std::invoke_result_t<Fn&>;

  /// The call of `fn`; `what` (a string literal) names it in errors.
  BlockingCall(Fn fn, const char* what, Attempt attempt = {})
      : fn_(std::move(fn)), attempt_(std::move(attempt)), what_(what) {}
  BlockingCall(BlockingCall &&) = default;
  BlockingCall& operator=(BlockingCall&&) = delete;

  /// Ready with fn's result once a pool thread ran it (or the attempt did it here).
  Poll<Output> poll(Context & cx) {
    if (fn_) {
      if constexpr (!std::is_same_v<Attempt, NoAttempt>) {
        if (auto done = attempt_()) {
          fn_.reset();
          return Poll<Output>(std::in_place, std::move(*done));
        }
      }
      handle_.emplace(spawn_blocking(std::move(*fn_)));
      fn_.reset();
    }
    POLLUX_CHECK_NOT_DONE(BlockingCall, handle_.has_value());
    POLLUX_TRY_READY_ASSIGN(auto result, handle_->poll(cx));
    handle_.reset();
    if (!result) throw std::system_error(ECANCELED, std::generic_category(), what_);
    if constexpr (std::is_void_v<Output>) {
      return ready();
    } else {
      return Poll<Output>(std::in_place, std::move(result).value());
    }
  }

 private:
  std::optional<Fn> fn_;  // until the first poll
  [[no_unique_address]] Attempt attempt_;
  std::optional<BlockingHandle<Output>> handle_;
  const char* what_;
};

}  // namespace pollux::detail
