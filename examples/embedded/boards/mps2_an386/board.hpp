// The example board package for QEMU's mps2-an386 (a Cortex-M4 on Arm's
// MPS2 FPGA board): pollux's board functions (pollux/embedded/board.hpp)
// over semihosting, SysTick as the TickTimer's interrupt, and the CMSDK
// timer 0 as a second interrupt source for the examples. Copy it as the
// start of a port to another board: only these few functions change.
#pragma once

#include <cstdint>
#include <string_view>

#include <pollux/embedded/board.hpp>

namespace mps2 {

/// The core clock that SysTick and the CMSDK timers count (25 MHz).
inline constexpr std::uint32_t kCoreHz = 25'000'000;

/// Starts SysTick at `hz` interrupts a second; each calls TickTimer::tick_started().
void start_systick(std::uint32_t hz) noexcept;

/// Starts CMSDK timer 0 with an interrupt every `period_us` microseconds;
/// each calls `handler` from the interrupt.
void start_timer0(std::uint32_t period_us, void (*handler)() noexcept) noexcept;
/// Stops timer 0 and its interrupt.
void stop_timer0() noexcept;

/// Cycles counted by SysTick's down-counter since its last reload (for
/// latency figures; QEMU's cycle counts are not a real core's).
std::uint32_t systick_value() noexcept;

/// Writes an unsigned number in decimal to the console.
void write_number(std::uint64_t n) noexcept;

}  // namespace mps2
