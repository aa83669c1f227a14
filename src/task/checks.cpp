// The slow paths of tasks: a task that can never be woken (debug builds),
// and an exception that no JoinHandle will ever see.
#include <cstdio>
#include <exception>
#include <string>

#include "pollux/core/detail/contract.hpp"
#include "pollux/task/detail/header.hpp"
#include "pollux/task/unhandled_exception.hpp"

namespace pollux::detail {

void report_lost_wake(TaskHeader* task) noexcept {
  LostWake policy = task->vtable->lost_wake(task);
  if (policy == LostWake::Ignore) return;
  std::string name(meta_of(task).name());
  std::string text = "task " + std::to_string(task->id) + (name.empty() ? "" : " \"" + name + "\"") + " (future " +
                     std::string(task->vtable->future_type) +
                     ") returned Pending but kept no waker: nothing can wake it, so it waits until it is aborted or "
                     "its executor shuts down (rule 2)";
  if (policy == LostWake::Terminate) contract_violation_text(text.c_str());
  std::fprintf(stderr, "pollux: %s\n", text.c_str());
  std::fflush(stderr);
}

}  // namespace pollux::detail

namespace pollux::detail {

void handle_unhandled_exception(UnhandledException policy, std::uint64_t id, std::string_view name,
                                const std::exception_ptr& error) noexcept {
  if (policy == UnhandledException::Ignore) return;
  std::string what = "an exception that is not a std::exception";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  std::fprintf(stderr, "pollux: task %llu%s%.*s%s failed and nobody awaited it: %s\n",
               static_cast<unsigned long long>(id), name.empty() ? "" : " \"", static_cast<int>(name.size()),
               name.data(), name.empty() ? "" : "\"", what.c_str());
  std::fflush(stderr);
  if (policy == UnhandledException::Terminate) std::terminate();
}

}  // namespace pollux::detail
