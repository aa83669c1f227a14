// SplitRoutes: the wake-ups of a TlsStream split into a read half and a
// write half. One TLS engine serves both directions, so a read may have to
// send (records a write queued, a key update) and a write may have to
// receive: either half can wait on either direction of the stream under
// it. That stream keeps one waker per direction (rule 2), so handing it
// each half's waker in turn would keep only the last, and the other half
// would never wake. Instead the stream gets a waker per direction from
// here, and waking it wakes every half that waits on that direction.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>

#include "pollux/core/atomic_waker.hpp"
#include "pollux/core/context.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/core/waker.hpp"
#include "pollux/io/interest.hpp"

namespace pollux::tls::detail {

/// Which half polls: the reader or the writer.
enum class Half : std::uint8_t { Reader = 0, Writer = 1 };

/// Who waits on each direction of the stream under two halves.
class SplitRoutes : public RefCounted<SplitRoutes> {
 public:
  SplitRoutes() noexcept : directions_{Direction(this, Interest::Read), Direction(this, Interest::Write)} {}
  SplitRoutes(const SplitRoutes&) = delete;
  SplitRoutes& operator=(const SplitRoutes&) = delete;

  /// Polls the stream in `direction` for `half`, through `op(routed_cx)`:
  /// a Pending leaves `half` among the waiters of that direction, woken
  /// by the direction's waker the stream keeps. Called with the halves'
  /// lock held, so one half at a time.
  template <class Op>
  auto poll(Context& cx, Half half, Interest direction, Op&& op) {
    std::uint8_t bit = bit_of(half);
    halves_[index(half)].register_waker(cx.waker());
    // Marked before the stream is polled: a wake it gives meanwhile finds us.
    waiting_[index(direction)].fetch_or(bit, std::memory_order_acq_rel);
    Waker routed = waker_from(Arc<Direction>(&directions_[index(direction)]));
    Context routed_cx(routed);
    auto result = op(routed_cx);
    if (result.is_ready())
      waiting_[index(direction)].fetch_and(static_cast<std::uint8_t>(~bit), std::memory_order_relaxed);
    return result;
  }

  /// `half`'s future went away: it waits on nothing, and its waker goes (rule 5).
  void forget(Half half) noexcept {
    std::uint8_t keep = static_cast<std::uint8_t>(~bit_of(half));
    waiting_[0].fetch_and(keep, std::memory_order_relaxed);
    waiting_[1].fetch_and(keep, std::memory_order_relaxed);
    (void)halves_[index(half)].take();
  }

 private:
  // One direction's waker: an object inside the routes, counted with them.
  class Direction {
   public:
    Direction(SplitRoutes* routes, Interest direction) noexcept : routes_(routes), direction_(direction) {}
    // Any thread (the reactor, the ring): wakes each half waiting here.
    void wake() noexcept { routes_->wake(direction_); }
    friend void intrusive_ptr_add_ref(Direction* d) noexcept { intrusive_ptr_add_ref(d->routes_); }
    friend void intrusive_ptr_release(Direction* d) noexcept { intrusive_ptr_release(d->routes_); }

   private:
    SplitRoutes* routes_;
    Interest direction_;
  };

  static std::uint8_t bit_of(Half half) noexcept { return static_cast<std::uint8_t>(1u << index(half)); }
  static unsigned index(Half half) noexcept { return static_cast<unsigned>(half); }
  static unsigned index(Interest direction) noexcept { return direction == Interest::Read ? 0 : 1; }

  void wake(Interest direction) noexcept {
    std::uint8_t waiting = waiting_[index(direction)].exchange(0, std::memory_order_acq_rel);
    for (Half half : {Half::Reader, Half::Writer}) {
      if (waiting & bit_of(half)) halves_[index(half)].wake_by_ref();
    }
  }

  Direction directions_[2];
  pollux::detail::Atomic<std::uint8_t> waiting_[2]{};  // per direction: the bits of the halves waiting on it
  AtomicWaker halves_[2];                              // per half: the task to wake
};

}  // namespace pollux::tls::detail
