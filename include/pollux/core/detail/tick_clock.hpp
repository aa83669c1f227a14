// TickClock: the clock of figures read on hot paths (a worker's busy time
// around each park, a task's figures around each poll). On x86-64 with an
// invariant time-stamp counter it is that counter: one instruction, where
// steady_clock is a call into the vDSO and a conversion, some thirty
// instructions. Ticks become nanoseconds only when figures are read, at the
// rate the two clocks have kept since the first tick was taken. Elsewhere a
// tick is a steady_clock nanosecond. The counter is read with the
// compiler's builtin and the CPU is asked about it in the library, so no
// user's translation unit pays for the intrinsics headers.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>

#include "pollux/core/detail/chrono.hpp"

namespace pollux::detail {

class TickClock {
 public:
  /// Now, in ticks. The first call fixes the origin of the rate.
  static std::uint64_t now() noexcept {
#if defined(__x86_64__)
    if (origin().tsc) return __builtin_ia32_rdtsc();
#endif
    return static_cast<std::uint64_t>(steady_ns());
  }

  /// Nanoseconds per tick, from the two clocks' progress since the origin,
  /// read at `now_ns` (steady_ns()) and `now_ticks` (now()).
  static double ns_per_tick(std::int64_t now_ns, std::uint64_t now_ticks) noexcept {
    const Origin& o = origin();
    if (!o.tsc) return 1.0;
    std::uint64_t ticks = now_ticks - o.ticks;
    return ticks == 0 ? 0.0 : static_cast<double>(now_ns - o.ns) / static_cast<double>(ticks);
  }

  /// Nanoseconds per tick, as of now.
  static double ns_per_tick() noexcept {
    std::uint64_t ticks = now();
    return ns_per_tick(steady_ns(), ticks);
  }

  /// steady_clock, in nanoseconds.
  static std::int64_t steady_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

 private:
  struct Origin {
    bool tsc;
    std::int64_t ns;
    std::uint64_t ticks;
  };

  static const Origin& origin() noexcept {
    static const Origin o = make_origin();
    return o;
  }

  // Asks the CPU whether its counter ticks at one rate in every power state
  // (then ticks measure time), and takes the origin of both clocks.
  static Origin make_origin() noexcept;
};

}  // namespace pollux::detail
