// copy_bidirectional(a, b): copies a to b and b to a at once, the heart of
// a proxy. When one side's reading ends, the other side's writing is shut
// down (the FIN passes through the proxy); the future is Ready when both
// directions ended, with the bytes copied each way (a to b, b to a). An
// error in either direction ends it with that error (thrown, rule 7).
// Both streams must outlive it; each direction has its own 8 KiB buffer.
// Cancellation: not cancel-safe: bytes read but not yet written are lost.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstdint>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/io/async_io.hpp"
#include "pollux/io/detail/copy_buffer.hpp"

namespace pollux {

/// The future copy_bidirectional(a, b) returns.
template <class A, class B>
requires AsyncRead<A> && AsyncWrite<A> && AsyncRead<B> && AsyncWrite<B>
class [[nodiscard("futures do nothing unless polled")]] CopyBidirectional {
 public:
  using Output = std::pair<std::uint64_t, std::uint64_t>;

  /// What copy_bidirectional() makes; call that instead.
  CopyBidirectional(A & a, B & b) : a_(&a), b_(&b) {}
  CopyBidirectional(CopyBidirectional &&) noexcept = default;
  CopyBidirectional& operator=(CopyBidirectional&&) = delete;
  ~CopyBidirectional() {
    if (a_ == nullptr) return;
    if (a_to_b_.state == State::Copying) a_to_b_.buffer.abandon(*a_, *b_);
    if (b_to_a_.state == State::Copying) b_to_a_.buffer.abandon(*b_, *a_);
    if (a_to_b_.state == State::ShuttingDown) b_->abandon(Interest::Write);
    if (b_to_a_.state == State::ShuttingDown) a_->abandon(Interest::Write);
  }

  /// Copies both ways until both directions ended; Ready with the bytes copied each way.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(CopyBidirectional, !done_);
    // Both directions are polled every time: each registers its own waker.
    bool a_done = poll_direction(a_to_b_, *a_, *b_, cx);
    bool b_done = poll_direction(b_to_a_, *b_, *a_, cx);
    if (!a_done || !b_done) return pending;
    done_ = true;
    return ready(Output(a_to_b_.copied, b_to_a_.copied));
  }

 private:
  enum class State { Copying, ShuttingDown, Done };

  struct Direction {
    detail::CopyBuffer buffer;
    State state = State::Copying;
    std::uint64_t copied = 0;
  };

  // Drives one direction; true once it is done.
  template <class From, class To>
  static bool poll_direction(Direction & d, From & from, To & to, Context & cx) {
    if (d.state == State::Copying) {
      auto copied = d.buffer.poll_copy(cx, from, to);
      if (copied.is_pending()) return false;
      d.copied = copied.value();
      d.state = State::ShuttingDown;
    }
    if (d.state == State::ShuttingDown) {
      if constexpr (AsyncShutdown<To>) {
        if (to.poll_shutdown(cx).is_pending()) return false;
      }
      d.state = State::Done;
    }
    return true;
  }

  A* a_;
  B* b_;
  Direction a_to_b_;
  Direction b_to_a_;
  bool done_ = false;
};

/// Copies `a` to `b` and `b` to `a` until both ended.
template <class A, class B>
requires AsyncRead<A> && AsyncWrite<A> && AsyncRead<B> && AsyncWrite<B> CopyBidirectional<A, B> copy_bidirectional(
    A& a, B& b) {
  return CopyBidirectional<A, B>(a, b);
}

}  // namespace pollux
