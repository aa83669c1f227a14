// TickClock's origin: the one place that asks the CPU about its counter.
#include "pollux/core/detail/tick_clock.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace pollux::detail {

TickClock::Origin TickClock::make_origin() noexcept {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  // CPUID 0x80000007, EDX bit 8: the invariant time-stamp counter.
  bool tsc = __get_cpuid(0x80000007, &a, &b, &c, &d) != 0 && (d & (1u << 8)) != 0;
  return Origin{tsc, steady_ns(), tsc ? __builtin_ia32_rdtsc() : 0};
#else
  return Origin{false, steady_ns(), 0};
#endif
}

}  // namespace pollux::detail
