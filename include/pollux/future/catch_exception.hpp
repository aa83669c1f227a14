// catch_exception(f): f's output as a Result<T, std::exception_ptr>: the
// value, or the exception a poll of f threw (futures-rs's catch_unwind).
// A server wraps each connection in it, so that one peer's reset ends
// that connection and is logged, rather than reaching whoever awaits the
// connection's task. f is destroyed on the poll that caught (rule 7: a
// future that threw may only be destroyed). Pipe form: `f | catch_exception()`.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <exception>
#include <optional>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/pipe.hpp"
#include "pollux/core/result.hpp"

namespace pollux {

/// The future catch_exception(f) returns.
template <Future F>
class [[nodiscard("futures do nothing unless polled")]] CatchException {
 public:
  using Output = Result<unit_if_void_t<output_t<F>>, std::exception_ptr>;

  /// What catch_exception() wraps around `future`.
  explicit CatchException(F future) : future_(std::in_place, std::move(future)) {}

  /// Polls the inner future; an exception it throws becomes the Result's error.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(CatchException, future_.has_value());
    try {
      auto out = poll_unit(*future_, cx);
      if (out.is_pending()) return pending;
      future_.reset();
      return Poll<Output>(std::in_place, std::move(out).value());
    } catch (...) {
      future_.reset();
      return Poll<Output>(std::in_place, std::current_exception());
    }
  }

 private:
  std::optional<F> future_;  // empty once Ready
};

/// `future`'s output, or the exception it threw, as a Result.
template <Future F>
CatchException<F> catch_exception(F future) {
  return CatchException<F>(std::move(future));
}

/// The right-hand side of `f | catch_exception()`.
struct CatchExceptionAdaptor : PipeAdaptor {};

/// `f | catch_exception()`.
inline CatchExceptionAdaptor catch_exception() noexcept { return {}; }

/// `f | catch_exception()`.
template <Future F>
CatchException<F> pipe_into(F future, CatchExceptionAdaptor) {
  return CatchException<F>(std::move(future));
}

}  // namespace pollux
