// IoFuture<Op>: the one future every I/O operation is made of. An operation
// (read, write, readable, writable, peek, accept, send_to, recv_from, ...)
// says how to try itself once and how to give its waker back; IoFuture adds
// the states every such future has: polled once more after Pending, never
// after Ready (rule 3), and destroyed while it waits, it calls the op's
// abandon(), so the socket keeps no waker of a future that is gone (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <concepts>
#include <type_traits>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/poll.hpp"

namespace pollux {

/// One operation on an I/O object, what IoFuture drives: `poll(cx)` tries
/// it, Ready with its result, or Pending with the waker of `cx` kept by the
/// object (rule 2); `abandon()` takes that waker back (the object's
/// abandon(interest) for the interest the operation waits on).
template <class Op>
concept IoOperation = std::move_constructible<Op> && requires(Op& op, Context& cx) {
  typename Op::Output;
  { op.poll(cx) } -> std::same_as<Poll<typename Op::Output>>;
  { op.abandon() }
  noexcept;
};

/// The future of one I/O operation: Ready with what Op's poll gave.
/// Cancel-safe as Op is: destroyed while it waits, it gives the waker back.
/// (Op is checked when the future is made, not when it is named: a socket
/// names its futures inside its own class, before it is complete.)
template <class Op>
class [[nodiscard("futures do nothing unless polled")]] IoFuture {
  static_assert(IoOperation<Op>, "pollux::IoFuture: Op needs Output, poll(Context&) and a noexcept abandon()");

 public:
  using Output = typename Op::Output;

  /// Makes the operation from `args` (Op's constructor arguments).
  template <class... Args>
  requires std::constructible_from<Op, Args...>
  explicit IoFuture(Args && ... args) : op_(std::forward<Args>(args)...) {}
  IoFuture(IoFuture && other) noexcept(std::is_nothrow_move_constructible_v<Op>)
      : op_(std::move(other.op_)), state_(std::exchange(other.state_, State::Done)) {}
  IoFuture& operator=(IoFuture&&) = delete;
  ~IoFuture() {
    if (state_ == State::Waiting) op_.abandon();
  }

  /// Tries the operation: Ready with its result, or Pending until the object is ready for it.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(IoFuture, state_ != State::Done);
    Poll<Output> result = op_.poll(cx);
    state_ = result.is_ready() ? State::Done : State::Waiting;
    return result;
  }

 private:
  enum class State {
    Start,    // not polled yet: no waker given anywhere
    Waiting,  // Pending: the object keeps our waker
    Done,     // Ready, or moved from
  };

  Op op_;
  State state_ = State::Start;
};

}  // namespace pollux
