// The board: the few functions the embedded profile needs from the
// hardware, declared here and defined once per board by the user (an
// example for QEMU's mps2-an386 lives in examples/embedded/boards/). The
// library calls nothing else of the hardware; interrupts are masked by the
// core itself (core/detail/interrupts.hpp).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20
#include "pollux/embedded/detail/profile.hpp"

#include <cstdint>
#include <string_view>

namespace pollux::board {

/// Sleeps the core until an interrupt is pending (WFI on Cortex-M).
/// SingleCoreExecutor calls it with interrupts masked, after it found its
/// run queue empty: a pending interrupt still ends the sleep, and its
/// handler runs as soon as the executor unmasks, so a wake that an
/// interrupt delivers between the executor's last look and this sleep is
/// never missed. It may return early (a spurious wake costs one look).
void wait_for_interrupt() noexcept;

/// Writes `text` to the board's console (semihosting, a UART). Used by
/// the default panic handler; the examples print through it too.
void write(std::string_view text) noexcept;

/// Ends the program with `status` (0: success): semihosting's exit under
/// QEMU or a debugger, a reset or a halt on a board in the field.
[[noreturn]] void exit(int status) noexcept;

}  // namespace pollux::board
