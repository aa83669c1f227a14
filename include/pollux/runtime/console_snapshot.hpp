// What a runtime's console socket sends to pollux-console: its metrics and
// its live tasks, as versioned lines of `key=value` words that a script
// can read too. The runtime writes one snapshot per connection; the
// console parses it and draws its tables. Parsing checks every line, so a
// truncated or foreign answer is an error that says where, never a table
// of zeros.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pollux/exec/task_dump.hpp"
#include "pollux/runtime/runtime_metrics.hpp"

namespace pollux {

/// One answer of a runtime's console socket.
struct ConsoleSnapshot {
  /// The runtime's metrics when it answered.
  RuntimeMetrics metrics;
  /// Its live tasks; empty when the executor did not answer in time (a
  /// current-thread runtime inside a long poll, or not running).
  std::optional<std::vector<TaskInfo>> tasks;
};

/// A snapshot that could not be parsed: the message names the line.
class ConsoleFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// `snapshot` as the console socket sends it: a first line
/// "pollux-console 2", one line per part, one per task, and "end".
std::string format_console_snapshot(const ConsoleSnapshot& snapshot);

/// The snapshot in `text`. Throws ConsoleFormatError for another version,
/// a malformed or unknown line, or a text that stops before "end".
ConsoleSnapshot parse_console_snapshot(std::string_view text);

/// `text` safe to print on a terminal: each control byte (an escape
/// sequence's ESC, a newline, DEL) and each backslash shown as a C escape
/// ("\x1b", "\n", "\\"), so a task name cannot move the cursor, clear the
/// screen or forge a line of the console's table.
std::string printable(std::string_view text);

}  // namespace pollux
