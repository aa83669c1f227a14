// The console socket's text: written by format_console_snapshot, read back
// by parse_console_snapshot (pollux-console). Each line is a keyword and
// `key=value` words; a task's name comes last and runs to the end of its
// line, so that it may hold spaces.
#include "pollux/runtime/console_snapshot.hpp"

#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace pollux {

namespace {

constexpr std::string_view kFirstLine = "pollux-console 2";

struct Writer {
  std::string out;
  Writer& word(std::string_view key, std::uint64_t value) {
    out.append(" ").append(key).append("=").append(std::to_string(value));
    return *this;
  }
  Writer& line(std::string_view keyword) {
    if (!out.empty()) out.append("\n");
    out.append(keyword);
    return *this;
  }
};

std::uint64_t ns(std::chrono::nanoseconds d) {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(d.count(), 0));
}

void write_histogram(Writer& w, std::string_view keyword, const DurationHistogram& h) {
  w.line(keyword).word("sum_ns", ns(h.sum));
  w.out.append(" counts=");
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    if (i != 0) w.out.append(",");
    w.out.append(std::to_string(h.counts[i]));
  }
}

// One line split into its keyword and words; the reader of a line takes
// the words it knows and complains about any it does not.
class Line {
 public:
  Line(std::size_t number, std::string_view text) : number_(number) {
    std::size_t space = text.find(' ');
    keyword_ = text.substr(0, space);
    std::string_view rest = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
    while (!rest.empty()) {
      std::size_t eq = rest.find('=');
      if (eq == std::string_view::npos || eq == 0) fail("expected key=value, got \"" + std::string(rest) + "\"");
      std::string key(rest.substr(0, eq));
      rest.remove_prefix(eq + 1);
      if (key == "name") {  // the last word: the rest of the line
        words_[key] = std::string(rest);
        break;
      }
      std::size_t end = rest.find(' ');
      words_[key] = std::string(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    }
  }

  std::string_view keyword() const { return keyword_; }

  bool has(const char* key) const { return words_.contains(key); }

  std::uint64_t number(const char* key) {
    std::string text = take(key);
    std::uint64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size()) {
      fail(std::string(key) + " is not a whole number: \"" + text + "\"");
    }
    return value;
  }

  std::string take(const char* key) {
    auto it = words_.find(key);
    if (it == words_.end()) fail(std::string("no ") + key + "=");
    std::string value = std::move(it->second);
    words_.erase(it);
    return value;
  }

  // Every word was read: an unknown one is an error, not ignored.
  void done() {
    if (!words_.empty()) fail("unknown word " + words_.begin()->first + "=");
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw ConsoleFormatError("console snapshot, line " + std::to_string(number_) + " (" + std::string(keyword_)
                             + "): " + what);
  }

 private:
  std::size_t number_;
  std::string_view keyword_;
  std::map<std::string, std::string> words_;
};

DurationHistogram read_histogram(Line& line) {
  DurationHistogram h;
  h.sum = std::chrono::nanoseconds(line.number("sum_ns"));
  std::string counts = line.take("counts");
  std::string_view rest = counts;
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), h.counts[i]);
    if (error != std::errc{} || end != item.data() + item.size()) line.fail("a bucket count is not a whole number");
    if ((comma == std::string_view::npos) != (i + 1 == h.counts.size())) {
      line.fail("expected " + std::to_string(h.counts.size()) + " bucket counts");
    }
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return h;
}

TaskInfo::State read_state(Line& line) {
  std::string state = line.take("state");
  if (state == "idle") return TaskInfo::State::Idle;
  if (state == "scheduled") return TaskInfo::State::Scheduled;
  if (state == "running") return TaskInfo::State::Running;
  line.fail("unknown state \"" + state + "\"");
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_console_snapshot(const ConsoleSnapshot& snapshot) {
  const RuntimeMetrics& m = snapshot.metrics;
  const ExecutorMetrics& e = m.executor;
  Writer w;
  w.line(kFirstLine);
  w.line("executor")
      .word("counted", e.counted)
      .word("workers", e.workers)
      .word("uptime_ns", ns(e.uptime))
      .word("live", e.live_tasks)
      .word("spawned", e.spawned_tasks)
      .word("finished", e.finished_tasks)
      .word("inject", e.inject_queue_depth)
      .word("histograms", e.histograms);
  for (const WorkerMetrics& worker : e.worker) {
    w.line("worker")
        .word("polls", worker.polls)
        .word("steals", worker.steals)
        .word("steal_operations", worker.steal_operations)
        .word("overflows", worker.overflows)
        .word("parks", worker.parks)
        .word("unparks", worker.unparks)
        .word("busy_ns", ns(worker.busy))
        .word("queue", worker.local_queue_depth);
  }
  if (e.histograms) {
    write_histogram(w, "poll_duration", e.poll_duration);
    write_histogram(w, "schedule_latency", e.schedule_latency);
  }
  w.line("driver")
      .word("counted", m.driver.counted)
      .word("socket_events", m.driver.socket_events)
      .word("uring_completions", m.driver.uring_completions)
      .word("timers_fired", m.driver.timers_fired);
  w.line("blocking")
      .word("threads", m.blocking.threads)
      .word("idle", m.blocking.idle_threads)
      .word("queue", m.blocking.queue_depth)
      .word("jobs", m.blocking.jobs_submitted);
  if (!snapshot.tasks) {
    w.line("tasks_unavailable");
  } else {
    w.line("tasks").word("count", snapshot.tasks->size());
    for (const TaskInfo& task : *snapshot.tasks) {
      w.line("task").word("id", task.id).out.append(" state=").append(to_string(task.state));
      w.word("polls", task.polls).word("age_ns", ns(task.age)).word("wakers", task.wakers);
      if (const std::optional<TaskFigures>& f = task.figures) {
        w.word("wakes_self", f->wakes_by_self)
            .word("wakes_others", f->wakes_by_others)
            .word("busy_ns", ns(f->busy))
            .word("scheduled_ns", ns(f->scheduled))
            .word("idle_ns", ns(f->idle))
            .word("longest_poll_ns", ns(f->longest_poll))
            .word("current_poll_ns", ns(f->current_poll));
      }
      std::string name = task.name;
      for (char& c : name) {
        if (c == '\n' || c == '\r') c = ' ';  // one task, one line
      }
      w.out.append(" name=").append(name);
    }
  }
  w.line("end");
  w.out.append("\n");
  return std::move(w.out);
}

ConsoleSnapshot parse_console_snapshot(std::string_view text) {
  ConsoleSnapshot s;
  std::size_t number = 0;
  bool ended = false;
  bool saw_executor = false;
  std::size_t tasks_expected = 0;
  while (!text.empty()) {
    std::size_t newline = text.find('\n');
    std::string_view raw = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    ++number;
    if (number == 1) {
      if (raw != kFirstLine) {
        throw ConsoleFormatError("console snapshot, line 1: expected \"" + std::string(kFirstLine) + "\", got \""
                                 + std::string(raw.substr(0, 80)) + "\" (not a pollux console, or another version)");
      }
      continue;
    }
    if (ended) throw ConsoleFormatError("console snapshot, line " + std::to_string(number) + ": text after \"end\"");
    Line line(number, raw);
    std::string_view k = line.keyword();
    if (k == "executor") {
      ExecutorMetrics& e = s.metrics.executor;
      e.counted = line.number("counted") != 0;
      e.workers = line.number("workers");
      e.uptime = std::chrono::nanoseconds(line.number("uptime_ns"));
      e.live_tasks = line.number("live");
      e.spawned_tasks = line.number("spawned");
      e.finished_tasks = line.number("finished");
      e.inject_queue_depth = line.number("inject");
      e.histograms = line.number("histograms") != 0;
      saw_executor = true;
    } else if (k == "worker") {
      WorkerMetrics w;
      w.polls = line.number("polls");
      w.steals = line.number("steals");
      w.steal_operations = line.number("steal_operations");
      w.overflows = line.number("overflows");
      w.parks = line.number("parks");
      w.unparks = line.number("unparks");
      w.busy = std::chrono::nanoseconds(line.number("busy_ns"));
      w.local_queue_depth = line.number("queue");
      s.metrics.executor.worker.push_back(w);
    } else if (k == "poll_duration") {
      s.metrics.executor.poll_duration = read_histogram(line);
    } else if (k == "schedule_latency") {
      s.metrics.executor.schedule_latency = read_histogram(line);
    } else if (k == "driver") {
      s.metrics.driver.counted = line.number("counted") != 0;
      s.metrics.driver.socket_events = line.number("socket_events");
      s.metrics.driver.uring_completions = line.number("uring_completions");
      s.metrics.driver.timers_fired = line.number("timers_fired");
    } else if (k == "blocking") {
      s.metrics.blocking.threads = line.number("threads");
      s.metrics.blocking.idle_threads = line.number("idle");
      s.metrics.blocking.queue_depth = line.number("queue");
      s.metrics.blocking.jobs_submitted = line.number("jobs");
    } else if (k == "tasks_unavailable") {
      s.tasks.reset();
    } else if (k == "tasks") {
      tasks_expected = line.number("count");
      s.tasks.emplace();
    } else if (k == "task") {
      if (!s.tasks) line.fail("a task before the \"tasks\" line");
      TaskInfo t{};
      t.id = line.number("id");
      t.state = read_state(line);
      t.polls = line.number("polls");
      t.age = std::chrono::nanoseconds(line.number("age_ns"));
      t.wakers = line.number("wakers");
      if (line.has("busy_ns")) {  // a runtime built with per-task figures: all of them, then
        TaskFigures f;
        f.wakes_by_self = line.number("wakes_self");
        f.wakes_by_others = line.number("wakes_others");
        f.busy = std::chrono::nanoseconds(line.number("busy_ns"));
        f.scheduled = std::chrono::nanoseconds(line.number("scheduled_ns"));
        f.idle = std::chrono::nanoseconds(line.number("idle_ns"));
        f.longest_poll = std::chrono::nanoseconds(line.number("longest_poll_ns"));
        f.current_poll = std::chrono::nanoseconds(line.number("current_poll_ns"));
        t.figures = f;
      }
      t.name = line.take("name");
      s.tasks->push_back(std::move(t));
    } else if (k == "end") {
      ended = true;
    } else {
      line.fail("unknown line");
    }
    line.done();
  }
  if (number == 0) throw ConsoleFormatError("console snapshot: empty (the runtime closed the connection at once)");
  if (!ended)
    throw ConsoleFormatError("console snapshot: cut short after line " + std::to_string(number) + ", before \"end\"");
  if (!saw_executor) throw ConsoleFormatError("console snapshot: no executor line");
  if (s.metrics.executor.worker.size() != s.metrics.executor.workers) {
    throw ConsoleFormatError("console snapshot: " + std::to_string(s.metrics.executor.workers) + " workers, but "
                             + std::to_string(s.metrics.executor.worker.size()) + " worker lines");
  }
  if (s.tasks && s.tasks->size() != tasks_expected) {
    throw ConsoleFormatError("console snapshot: " + std::to_string(tasks_expected) + " tasks announced, "
                             + std::to_string(s.tasks->size()) + " listed");
  }
  return s;
}

}  // namespace pollux
