// mps2-an386: the board functions over Arm semihosting (QEMU's
// -semihosting), the vector table and the reset code, SysTick and timer 0.
#include "board.hpp"

#include <cstddef>
#include <cstdint>

#include <pollux/embedded/tick_timer.hpp>

namespace {

// Registers of the core and of the CMSDK timer (ARMv7-M ARM, B3.3; CMSDK TRM).
volatile std::uint32_t& reg(std::uintptr_t address) { return *reinterpret_cast<volatile std::uint32_t*>(address); }
constexpr std::uintptr_t kSysTickCtrl = 0xE000E010, kSysTickLoad = 0xE000E014, kSysTickVal = 0xE000E018;
constexpr std::uintptr_t kCpacr = 0xE000ED88;      // the FPU's access bits
constexpr std::uintptr_t kNvicIser0 = 0xE000E100;  // interrupt set-enable
constexpr std::uintptr_t kNvicIcer0 = 0xE000E180;  // interrupt clear-enable
constexpr std::uintptr_t kTimer0 = 0x40000000;     // CTRL +0, VALUE +4, RELOAD +8, INTCLEAR +0xC
constexpr unsigned kTimer0Irq = 8;

// Semihosting (Arm's "Semihosting for AArch32 and AArch64"): BKPT 0xAB
// with the operation in r0 and its argument in r1.
int semihost(int op, const void* arg) noexcept {
  register int r0 asm("r0") = op;
  register const void* r1 asm("r1") = arg;
  asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}
constexpr int kSysWrite0 = 0x04;
constexpr int kSysExitExtended = 0x20;
constexpr std::uint32_t kApplicationExit = 0x20026;

void (*timer0_handler)() noexcept = nullptr;

}  // namespace

namespace pollux::board {

void wait_for_interrupt() noexcept { asm volatile("wfi" ::: "memory"); }

void write(std::string_view text) noexcept {
  char chunk[65];
  while (!text.empty()) {
    std::size_t n = text.size() < 64 ? text.size() : 64;
    for (std::size_t i = 0; i < n; ++i) chunk[i] = text[i];
    chunk[n] = '\0';
    semihost(kSysWrite0, chunk);
    text.remove_prefix(n);
  }
}

void exit(int status) noexcept {
  // SYS_EXIT_EXTENDED: QEMU exits with `status` as its own exit status.
  const std::uint32_t block[2] = {kApplicationExit, static_cast<std::uint32_t>(status)};
  semihost(kSysExitExtended, block);
  for (;;) asm volatile("wfi");
}

}  // namespace pollux::board

namespace mps2 {

void start_systick(std::uint32_t hz) noexcept {
  reg(kSysTickLoad) = kCoreHz / hz - 1;
  reg(kSysTickVal) = 0;
  reg(kSysTickCtrl) = 0b111;  // the core clock, the interrupt, enabled
}

std::uint32_t systick_value() noexcept { return reg(kSysTickVal); }

void start_timer0(std::uint32_t period_us, void (*handler)() noexcept) noexcept {
  timer0_handler = handler;
  reg(kTimer0 + 0x8) = kCoreHz / 1'000'000 * period_us;
  reg(kTimer0 + 0x4) = kCoreHz / 1'000'000 * period_us;
  reg(kTimer0 + 0x0) = 0b1001;  // the interrupt, enabled
  reg(kNvicIser0) = 1u << kTimer0Irq;
}

void stop_timer0() noexcept {
  reg(kTimer0 + 0x0) = 0;
  reg(kNvicIcer0) = 1u << kTimer0Irq;
}

void write_number(std::uint64_t n) noexcept {
  char digits[21];
  std::size_t at = sizeof digits;
  do {
    digits[--at] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0);
  pollux::board::write(std::string_view(digits + at, sizeof digits - at));
}

}  // namespace mps2

// The reset code and the vector table.

extern "C" {
extern std::uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[], __stack_top[];
extern void (*__init_array_start[])();
extern void (*__init_array_end[])();
int main();

[[noreturn]] void reset_handler() {
  reg(kCpacr) |= 0xFu << 20;  // the FPU, for code built with -mfloat-abi=hard
  asm volatile("dsb\n\tisb");
  for (std::uint32_t *from = __data_load, *to = __data_start; to < __data_end;) *to++ = *from++;
  for (std::uint32_t* to = __bss_start; to < __bss_end;) *to++ = 0;
  for (auto* init = __init_array_start; init < __init_array_end; ++init) (*init)();
    // The reset code is what calls main on bare metal, which ISO C++ leaves
    // to the implementation (-Wpedantic says so).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
  pollux::board::exit(main());
#pragma GCC diagnostic pop
}

void systick_handler() { pollux::TickTimer::tick_started(); }

void timer0_irq() {
  reg(kTimer0 + 0xC) = 1;  // clear the interrupt
  if (timer0_handler != nullptr) timer0_handler();
}

[[noreturn]] void fault_handler() {
  pollux::board::write("mps2-an386: fault\n");
  pollux::board::exit(3);
}

void unused_handler() {}

// A program on this board never returns to anything that would run the
// destructors of its globals, so registering them does nothing (newlib's
// own registry would need the heap). __dso_handle, the key it registers
// them under, comes from the linker script.
int __cxa_atexit(void (*)(void*), void*, void*) { return 0; }

using Vector = void (*)();
__attribute__((section(".vectors"), used)) const Vector vectors[16 + 32] = {
    reinterpret_cast<Vector>(__stack_top),  // the initial stack pointer
    reset_handler,
    fault_handler,  // NMI
    fault_handler,  // HardFault
    fault_handler,  // MemManage
    fault_handler,  // BusFault
    fault_handler,  // UsageFault
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    unused_handler,  // SVCall
    unused_handler,  // DebugMonitor
    nullptr,
    unused_handler,  // PendSV
    systick_handler,
    // External interrupts 0..31: timer 0 is number 8.
    unused_handler,
    unused_handler,
    unused_handler,
    unused_handler,
    unused_handler,
    unused_handler,
    unused_handler,
    unused_handler,
    timer0_irq,
};
}
