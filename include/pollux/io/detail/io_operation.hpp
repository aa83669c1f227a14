// IoOperation: the future of one socket operation built from a poll
// function: Ready with its result, or Pending with the waker stored by the
// socket; destroyed while it waits, it calls `abandon` to take the waker
// back (rule 5). What the Unix socket futures are made of.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"

namespace pollux::detail {

template <class T, class PollOp, class Abandon>
class [[nodiscard("futures do nothing unless polled")]] IoOperation {
 public:
  using Output = T;

  IoOperation(PollOp poll_op, Abandon abandon) : poll_op_(std::move(poll_op)), abandon_(std::move(abandon)) {}
  IoOperation(IoOperation && other) noexcept
      : poll_op_(std::move(other.poll_op_)),
        abandon_(std::move(other.abandon_)),
        state_(std::exchange(other.state_, State::Done)) {}
  IoOperation& operator=(IoOperation&&) = delete;
  ~IoOperation() {
    if (state_ == State::Waiting) abandon_();
  }

  Poll<T> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(IoOperation, state_ != State::Done);
    Poll<T> result = poll_op_(cx);
    state_ = result.is_ready() ? State::Done : State::Waiting;
    return result;
  }

 private:
  enum class State { Start, Waiting, Done };
  PollOp poll_op_;
  Abandon abandon_;
  State state_ = State::Start;
};

template <class T, class PollOp, class Abandon>
IoOperation<T, PollOp, Abandon> io_operation(PollOp poll_op, Abandon abandon) {
  return IoOperation<T, PollOp, Abandon>(std::move(poll_op), std::move(abandon));
}

}  // namespace pollux::detail
