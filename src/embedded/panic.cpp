// The embedded profile's failures: the panic handler (pollux/core/panic.hpp)
// and the contract checks' report, written through the board's console
// with no heap (a fixed buffer), then board::exit(1) by default.
#include <cstddef>
#include <string_view>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/panic.hpp"
#include "pollux/embedded/board.hpp"

namespace pollux {
namespace {

void default_panic(const char* message) noexcept {
  board::write("pollux: panic: ");
  board::write(message);
  board::write("\n");
  board::exit(1);
}

// Set only by the program's own code before it starts its tasks.
constinit PanicHandler handler = &default_panic;

}  // namespace

PanicHandler set_panic_handler(PanicHandler next) noexcept {
  PanicHandler previous = handler;
  handler = next != nullptr ? next : &default_panic;
  return previous;
}

void panic(const char* message) noexcept {
  handler(message);
  board::exit(1);  // a handler that returned
}

namespace detail {

// "contract violation: <type> <what>", cut to the buffer: the hosted text
// without its "pollux: " (the default handler adds "pollux: panic: ").
void contract_violation(std::string_view type, const char* what) noexcept {
  static char text[256];
  std::size_t at = 0;
  auto append = [&](std::string_view part) {
    for (char c : part) {
      if (at + 1 < sizeof text) text[at++] = c;
    }
  };
  append("contract violation: ");
  append(type);
  append(" ");
  append(what);
  text[at] = '\0';
  panic(text);
}

void contract_violation_text(const char* text) noexcept {
  static char line[256];
  std::size_t at = 0;
  for (const char* c = "contract violation: "; *c != '\0';) line[at++] = *c++;
  for (const char* c = text; *c != '\0' && at + 1 < sizeof line;) line[at++] = *c++;
  line[at] = '\0';
  panic(line);
}

}  // namespace detail
}  // namespace pollux

// abort() ends in the panic handler too: newlib's raises a signal, whose
// table it allocates, and libstdc++ built without exceptions calls abort
// where it would throw (a range check, a bad optional access).
extern "C" [[noreturn]] void abort() { pollux::panic("abort() was called"); }

// newlib's assert() calls this; its own version prints through stdio,
// which needs the heap. This one goes to the panic handler.
extern "C" [[noreturn]] void __assert_func(const char* file, int line, const char*, const char* expression) {
  static char text[256];
  std::size_t at = 0;
  auto append = [&](const char* part) {
    while (*part != '\0' && at + 1 < sizeof text) text[at++] = *part++;
  };
  char number[12];
  std::size_t digits = sizeof number;
  number[--digits] = '\0';
  for (unsigned n = static_cast<unsigned>(line); n != 0 || digits == sizeof number - 1; n /= 10) {
    number[--digits] = static_cast<char>('0' + n % 10);
  }
  append("assertion failed: ");
  append(expression);
  append(" (");
  append(file);
  append(":");
  append(number + digits);
  append(")");
  text[at] = '\0';
  pollux::panic(text);
}
