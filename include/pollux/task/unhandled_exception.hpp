// What happens to an exception that a task threw when nobody will ever see
// it: the task was detached (its JoinHandle destroyed before it took the
// output). By default it is reported on stderr with the task's id and name,
// so a failure never vanishes silently (rule 7 says exceptions reach whoever
// awaits; here nobody does). Executors and the runtime take the choice as
// an option, as tokio's unhandled_panic.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>
#include <exception>
#include <string_view>

namespace pollux {

/// The choice for an exception of a detached task.
enum class UnhandledException {
  Ignore,     ///< drop it without a word
  Report,     ///< print "pollux: task ID "NAME" failed and nobody awaited it: WHAT" on stderr (the default)
  Terminate,  ///< report it, then std::terminate(): a failed task is a failed program
};

namespace detail {
/// Carries out `policy` for `error`, thrown by task `id` named `name`.
void handle_unhandled_exception(UnhandledException policy, std::uint64_t id, std::string_view name,
                                const std::exception_ptr& error) noexcept;
}  // namespace detail

}  // namespace pollux
