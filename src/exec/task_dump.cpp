#include "pollux/exec/task_dump.hpp"

#include <cstdio>

namespace pollux {

const char* to_string(TaskInfo::State state) noexcept {
  switch (state) {
    case TaskInfo::State::Idle:
      return "idle";
    case TaskInfo::State::Scheduled:
      return "scheduled";
    case TaskInfo::State::Running:
      return "running";
  }
  return "?";
}

std::string format_dump(const std::vector<TaskInfo>& tasks) {
  std::string out = std::to_string(tasks.size()) + (tasks.size() == 1 ? " live task\n" : " live tasks\n");
  char line[160];
  for (const TaskInfo& task : tasks) {
    double age_ms = std::chrono::duration<double, std::milli>(task.age).count();
    std::snprintf(line, sizeof line, "  task %-6llu %-24s %-9s polls=%-8llu age=%.1fms\n",
                  static_cast<unsigned long long>(task.id), task.name.empty() ? "-" : task.name.c_str(),
                  to_string(task.state), static_cast<unsigned long long>(task.polls), age_ms);
    out += line;
  }
  return out;
}

namespace detail {
TaskInfo task_info(TaskHeader* task, std::int64_t now_ns) {
  TaskSnapshot state = task->state.load();
  TaskMeta& meta = meta_of(task);
  TaskInfo::State s = state.is_running()     ? TaskInfo::State::Running
                      : state.is_scheduled() ? TaskInfo::State::Scheduled
                                             : TaskInfo::State::Idle;
  return TaskInfo{task->id, std::string(meta.name()), s, meta.polls.load(std::memory_order_relaxed),
                  std::chrono::nanoseconds(now_ns - meta.spawned_ns)};
}
}  // namespace detail

}  // namespace pollux
