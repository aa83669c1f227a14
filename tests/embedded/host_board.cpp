// The board of the embedded profile's host build: the test program runs as
// a normal process, and its "interrupt" is the tick that wait_for_interrupt
// delivers (the executor calls it with interrupts masked, so the tick's
// wakes are seen after the executor unmasks, as on the core).
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <pollux/embedded/board.hpp>
#include <pollux/core/detail/interrupts.hpp>
#include <pollux/embedded/tick_timer.hpp>

namespace pollux::board {

void wait_for_interrupt() noexcept {
  detail::host_in_handler = true;  // as IPSR says on the core: the tick's wakes come from a handler
  TickTimer::tick_started();
  detail::host_in_handler = false;
}

void write(std::string_view text) noexcept { std::fwrite(text.data(), 1, text.size(), stdout); }

void exit(int status) noexcept {
  std::fflush(stdout);
  std::exit(status);
}

}  // namespace pollux::board

/// No timer hardware to start on a host.
void start_ticks(unsigned) noexcept {}
