// The slow path of the task's debug checks: a task that can never be woken.
#include <string>

#include "pollux/core/contract.hpp"
#include "pollux/task/header.hpp"

namespace pollux::detail {

void report_lost_wake(TaskHeader* task) noexcept {
  std::string name(meta_of(task).name);
  std::string text = "task " + std::to_string(task->id) + (name.empty() ? "" : " \"" + name + "\"") + " (future " +
                     type_name(*task->vtable->future_type) +
                     ") returned Pending but kept no waker: it will never be woken (rule 2)";
  contract_violation_text(text.c_str());
}

}  // namespace pollux::detail
