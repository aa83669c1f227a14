#include "pollux/exec/task_dump.hpp"

#include <algorithm>
#include <type_traits>
#include <cstdio>

namespace pollux {

namespace {

double ms(std::chrono::nanoseconds d) { return std::chrono::duration<double, std::milli>(d).count(); }

std::string fixed(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace

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

std::vector<std::string> task_warnings(const TaskInfo& task, const TaskWarnings& limits) {
  std::vector<std::string> out;
  if (task.state == TaskInfo::State::Idle && task.wakers == 0) {
    out.push_back("idle with no waker alive: nothing can wake it, only cancellation ends it");
  }
  if (task.figures) {
    const TaskFigures& f = *task.figures;
    if (f.current_poll > limits.slow_poll) {
      out.push_back("inside one poll for " + fixed("%.1f", ms(f.current_poll))
                    + " ms: it never yields, and blocks its worker meanwhile");
    } else if (f.longest_poll > limits.slow_poll) {
      out.push_back("a poll took " + fixed("%.1f", ms(f.longest_poll)) + " ms (over "
                    + fixed("%.1f", ms(limits.slow_poll)) + "): its worker ran nothing else meanwhile");
    }
  }
  return out;
}

std::string format_dump(const std::vector<TaskInfo>& tasks, const TaskWarnings& limits) {
  std::string out = std::to_string(tasks.size()) + (tasks.size() == 1 ? " live task\n" : " live tasks\n");
  char line[320];
  for (const TaskInfo& task : tasks) {
    double age_ms = std::chrono::duration<double, std::milli>(task.age).count();
    int n = std::snprintf(line, sizeof line, "  task %-6llu %-24s %-9s polls=%-8llu age=%.1fms wakers=%llu",
                          static_cast<unsigned long long>(task.id), task.name.empty() ? "-" : task.name.c_str(),
                          to_string(task.state), static_cast<unsigned long long>(task.polls), age_ms,
                          static_cast<unsigned long long>(task.wakers));
    out.append(line, static_cast<std::size_t>(std::clamp(n, 0, static_cast<int>(sizeof line) - 1)));
    if (task.figures) {
      const TaskFigures& f = *task.figures;
      std::snprintf(line, sizeof line, " wakes=%llu+%llu busy=%.1fms scheduled=%.1fms idle=%.1fms longest_poll=%.3fms",
                    static_cast<unsigned long long>(f.wakes_by_self),
                    static_cast<unsigned long long>(f.wakes_by_others), ms(f.busy), ms(f.scheduled), ms(f.idle),
                    ms(f.longest_poll));
      out += line;
    }
    out += '\n';
    for (const std::string& warning : task_warnings(task, limits)) out += "    warning: " + warning + '\n';
  }
  return out;
}

namespace detail {

namespace {

// Whatever holds a reference besides its owners (handle, registry) and its
// runner or queued Runnable (one, while scheduled or running) is a waker.
std::uint64_t wakers_of(TaskSnapshot state) noexcept {
  std::uint64_t others = state.owner_refs() + (state.is_scheduled() || state.is_running() ? 1 : 0);
  return state.refs() > others ? state.refs() - others : 0;
}

// `Slot`: TaskStats, or the empty NoTaskStats of a build without figures.
template <class Slot>
std::optional<TaskFigures> figures_of(const Slot& stats, std::chrono::nanoseconds age) {
  if constexpr (!std::is_same_v<Slot, TaskStats>) {
    return std::nullopt;
  } else {
    double ns_per_tick = TickClock::ns_per_tick();
    auto ns = [&](std::uint64_t ticks) {
      return std::chrono::nanoseconds(static_cast<std::int64_t>(static_cast<double>(ticks) * ns_per_tick));
    };
    auto ticks = [](const Atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
    TaskFigures f;
    f.wakes_by_self = stats.wakes_by_self.load(std::memory_order_relaxed);
    f.wakes_by_others = stats.wakes_by_others.load(std::memory_order_relaxed);
    f.busy = ns(ticks(stats.busy_ticks));
    f.scheduled = ns(ticks(stats.scheduled_ticks));
    f.longest_poll = ns(ticks(stats.longest_poll_ticks));
    std::uint64_t began = ticks(stats.poll_started);
    std::uint64_t now = TickClock::now();
    if (began != 0 && now > began) f.current_poll = ns(now - began);
    // The age is read on a coarse clock: idle time is clamped, never negative.
    f.idle = std::max(age - f.busy - f.current_poll - f.scheduled, std::chrono::nanoseconds(0));
    return f;
  }
}

}  // namespace

TaskInfo task_info(TaskHeader* task, std::int64_t now_ns) {
  TaskSnapshot state = task->state.load();
  TaskMeta& meta = meta_of(task);
  TaskInfo::State s = state.is_running()     ? TaskInfo::State::Running
                      : state.is_scheduled() ? TaskInfo::State::Scheduled
                                             : TaskInfo::State::Idle;
  std::chrono::nanoseconds age(now_ns - meta.spawned_ns);
  return TaskInfo{task->id,         std::string(meta.name()),       s, meta.polls.load(std::memory_order_relaxed), age,
                  wakers_of(state), figures_of(stats_of(task), age)};
}

}  // namespace detail

}  // namespace pollux
