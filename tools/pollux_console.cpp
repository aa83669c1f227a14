// pollux-console: attaches to a running pollux program's console socket
// (RuntimeOptions::console_socket, or POLLUX_CONSOLE=path in its
// environment) and shows its runtime: workers, tasks, queues, the driver
// and the blocking pool, refreshed like `top`, with rates between refreshes
// and warnings. --once prints one snapshot and exits, for scripts.
//
//   pollux-console SOCKET [--once] [--sort=polls|rate|age|id|name|state|busy|longest] [--interval=SECS] [--tasks=N]
//
// It needs no runtime of its own: one blocking connection per snapshot.
#include <pollux/runtime/console_snapshot.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using pollux::ConsoleSnapshot;
using pollux::TaskInfo;

struct Options {
  std::string socket;
  bool once = false;
  std::string sort = "polls";
  double interval_s = 1.0;
  std::size_t tasks = 30;
};

const char* const kUsage =
    "usage: pollux-console SOCKET [--once] [--sort=polls|rate|age|id|name|state|busy|longest] [--interval=SECS] [--tasks=N]\n";

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&](std::string_view prefix) { return std::string(arg.substr(prefix.size())); };
    if (arg == "--once") {
      o.once = true;
    } else if (arg.starts_with("--sort=")) {
      o.sort = value("--sort=");
      static const char* const kKeys[] = {"polls", "rate", "age", "id", "name", "state", "busy", "longest"};
      if (std::find(std::begin(kKeys), std::end(kKeys), o.sort) == std::end(kKeys)) {
        throw std::invalid_argument("--sort must be polls, rate, age, id, name, state, busy or longest, got \"" + o.sort
                                    + "\"");
      }
    } else if (arg.starts_with("--interval=")) {
      char* end = nullptr;
      std::string text = value("--interval=");
      o.interval_s = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0' || !(o.interval_s >= 0.05) || o.interval_s > 3600) {
        throw std::invalid_argument("--interval must be a number of seconds from 0.05 to 3600, got \"" + text + "\"");
      }
    } else if (arg.starts_with("--tasks=")) {
      std::string text = value("--tasks=");
      char* end = nullptr;
      long n = std::strtol(text.c_str(), &end, 10);
      if (end == text.c_str() || *end != '\0' || n < 0) {
        throw std::invalid_argument("--tasks must be a whole number, got \"" + text + "\"");
      }
      o.tasks = static_cast<std::size_t>(n);
    } else if (arg.starts_with("--")) {
      throw std::invalid_argument("unknown option " + std::string(arg));
    } else if (o.socket.empty()) {
      o.socket = arg;
    } else {
      throw std::invalid_argument("one socket only, got a second: " + std::string(arg));
    }
  }
  if (o.socket.empty()) throw std::invalid_argument("which socket? (the program's POLLUX_CONSOLE path)");
  return o;
}

// One snapshot: connect, read to the end, parse.
ConsoleSnapshot fetch(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) throw std::invalid_argument("the socket path is too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  timeval limit{5, 0};  // a runtime answers within its own limits; this bounds a stranger on the path
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) < 0) {
    int error = errno;
    ::close(fd);
    throw std::runtime_error("cannot attach to " + path + ": " + std::strerror(error)
                             + (error == ENOENT || error == ECONNREFUSED
                                    ? " (is the program running, with POLLUX_CONSOLE=" + path + "?)"
                                    : ""));
  }
  std::string text;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
      if (text.size() > (std::size_t{256} << 20)) {
        ::close(fd);
        throw std::runtime_error("the answer is over 256 MiB: not a pollux console");
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    int error = errno;
    ::close(fd);
    if (n < 0) throw std::runtime_error("reading from " + path + ": " + std::strerror(error));
    break;
  }
  return pollux::parse_console_snapshot(text);
}

std::string duration_text(std::chrono::nanoseconds d) {
  char out[32];
  double ns = static_cast<double>(d.count());
  if (ns < 1e3) {
    std::snprintf(out, sizeof out, "%.0fns", ns);
  } else if (ns < 1e6) {
    std::snprintf(out, sizeof out, "%.1fus", ns / 1e3);
  } else if (ns < 1e9) {
    std::snprintf(out, sizeof out, "%.1fms", ns / 1e6);
  } else {
    std::snprintf(out, sizeof out, "%.1fs", ns / 1e9);
  }
  return out;
}

// Polls per second of each task and worker since the previous snapshot.
struct Rates {
  std::map<std::uint64_t, double> task;
  std::vector<double> worker;
};

Rates rates_between(const ConsoleSnapshot* before, const ConsoleSnapshot& now) {
  Rates r;
  if (before == nullptr) return r;
  double seconds = std::chrono::duration<double>(now.metrics.executor.uptime - before->metrics.executor.uptime).count();
  if (seconds <= 0) return r;
  const auto& w0 = before->metrics.executor.worker;
  const auto& w1 = now.metrics.executor.worker;
  for (std::size_t i = 0; i < w1.size() && i < w0.size(); ++i) {
    r.worker.push_back(static_cast<double>(w1[i].polls - std::min(w1[i].polls, w0[i].polls)) / seconds);
  }
  if (before->tasks && now.tasks) {
    std::map<std::uint64_t, std::uint64_t> polls;
    for (const TaskInfo& t : *before->tasks) polls[t.id] = t.polls;
    for (const TaskInfo& t : *now.tasks) {
      auto it = polls.find(t.id);
      std::uint64_t was = it == polls.end() ? 0 : it->second;
      r.task[t.id] = static_cast<double>(t.polls - std::min(t.polls, was)) / seconds;
    }
  }
  return r;
}

// The figures' columns; zero for a runtime built without per-task figures
// (--sort=busy and --sort=longest then keep the snapshot's order).
std::chrono::nanoseconds busy_of(const TaskInfo& t) {
  return t.figures ? t.figures->busy : std::chrono::nanoseconds(0);
}
std::chrono::nanoseconds longest_of(const TaskInfo& t) {
  return t.figures ? t.figures->longest_poll : std::chrono::nanoseconds(0);
}

// What deserves a look: a task that stays in one poll, an executor that
// does not answer, work that waits while workers sleep.
std::vector<std::string> warnings(const ConsoleSnapshot* before, const ConsoleSnapshot& now) {
  std::vector<std::string> out;
  if (!now.tasks) {
    out.push_back(
        "the executor's thread did not list its tasks within 100 ms: a poll that does not return (a blocking call "
        "in a task?), or no block_on running");
  }
  if (before != nullptr && before->tasks && now.tasks) {
    std::map<std::uint64_t, const TaskInfo*> then;
    for (const TaskInfo& t : *before->tasks) then[t.id] = &t;
    for (const TaskInfo& t : *now.tasks) {
      auto it = then.find(t.id);
      // With figures, the task's own warnings below time the poll exactly.
      if (!t.figures && t.state == TaskInfo::State::Running && it != then.end()
          && it->second->state == TaskInfo::State::Running && it->second->polls == t.polls) {
        out.push_back("task " + std::to_string(t.id) + (t.name.empty() ? "" : " \"" + pollux::printable(t.name) + "\"")
                      + " has been inside one poll for over "
                      + duration_text(now.metrics.executor.uptime - before->metrics.executor.uptime)
                      + ": it blocks its worker");
      }
    }
  }
  if (now.tasks) {
    for (const TaskInfo& t : *now.tasks) {
      for (const std::string& warning : pollux::task_warnings(t)) {
        out.push_back("task " + std::to_string(t.id) + (t.name.empty() ? "" : " \"" + pollux::printable(t.name) + "\"")
                      + ": " + warning);
      }
    }
  }
  const auto& e = now.metrics.executor;
  std::size_t queued = e.inject_queue_depth;
  for (const auto& w : e.worker) queued += w.local_queue_depth;
  if (queued > 1000) out.push_back(std::to_string(queued) + " tasks wait in the run queues: the workers fall behind");
  if (now.metrics.blocking.queue_depth > 0) {
    out.push_back(std::to_string(now.metrics.blocking.queue_depth)
                  + " blocking jobs wait for a thread: the blocking pool is at its limit");
  }
  return out;
}

void print(const Options& o, const ConsoleSnapshot* before, const ConsoleSnapshot& s) {
  const auto& e = s.metrics.executor;
  Rates rates = rates_between(before, s);
  std::printf(
      "pollux console  %s  up %s  %zu worker%s  %zu live tasks (%llu spawned, %llu finished)  inject queue %zu\n",
      pollux::printable(o.socket).c_str(), duration_text(e.uptime).c_str(), e.workers, e.workers == 1 ? "" : "s",
      e.live_tasks, static_cast<unsigned long long>(e.spawned_tasks), static_cast<unsigned long long>(e.finished_tasks),
      e.inject_queue_depth);
  std::printf(
      "driver: %llu socket events, %llu io_uring completions, %llu timers fired   blocking: %zu threads "
      "(%zu idle), %zu queued, %llu jobs\n",
      static_cast<unsigned long long>(s.metrics.driver.socket_events),
      static_cast<unsigned long long>(s.metrics.driver.uring_completions),
      static_cast<unsigned long long>(s.metrics.driver.timers_fired), s.metrics.blocking.threads,
      s.metrics.blocking.idle_threads, s.metrics.blocking.queue_depth,
      static_cast<unsigned long long>(s.metrics.blocking.jobs_submitted));
  if (e.histograms) {
    std::printf("poll duration p50 <= %s, p99 <= %s   schedule latency p50 <= %s, p99 <= %s\n",
                duration_text(e.poll_duration.quantile(0.5)).c_str(),
                duration_text(e.poll_duration.quantile(0.99)).c_str(),
                duration_text(e.schedule_latency.quantile(0.5)).c_str(),
                duration_text(e.schedule_latency.quantile(0.99)).c_str());
  }
  if (!e.counted) std::printf("(this pollux was built with -Dmetrics=false: the counts are zero)\n");
  std::printf("\n%-7s %12s %10s %9s %9s %9s %9s %6s %6s\n", "WORKER", "POLLS", "POLLS/S", "STEALS", "OVERFLOWS",
              "PARKS", "UNPARKS", "BUSY%", "QUEUE");
  for (std::size_t i = 0; i < e.worker.size(); ++i) {
    const auto& w = e.worker[i];
    double busy = e.uptime.count() > 0
                      ? 100.0 * static_cast<double>(w.busy.count()) / static_cast<double>(e.uptime.count())
                      : 0.0;
    std::string rate = i < rates.worker.size() ? std::to_string(static_cast<long long>(rates.worker[i])) : "-";
    std::printf("%-7zu %12llu %10s %9llu %9llu %9llu %9llu %6.1f %6zu\n", i, static_cast<unsigned long long>(w.polls),
                rate.c_str(), static_cast<unsigned long long>(w.steals), static_cast<unsigned long long>(w.overflows),
                static_cast<unsigned long long>(w.parks), static_cast<unsigned long long>(w.unparks), busy,
                w.local_queue_depth);
  }
  if (s.tasks) {
    std::vector<const TaskInfo*> tasks;
    for (const TaskInfo& t : *s.tasks) tasks.push_back(&t);
    auto rate_of = [&](const TaskInfo* t) {
      auto it = rates.task.find(t->id);
      return it == rates.task.end() ? 0.0 : it->second;
    };
    std::stable_sort(tasks.begin(), tasks.end(), [&](const TaskInfo* a, const TaskInfo* b) {
      if (o.sort == "rate") return rate_of(a) > rate_of(b);
      if (o.sort == "age") return a->age > b->age;
      if (o.sort == "id") return a->id < b->id;
      if (o.sort == "name") return a->name < b->name;
      if (o.sort == "state") return static_cast<int>(a->state) > static_cast<int>(b->state);
      if (o.sort == "busy") return busy_of(*a) > busy_of(*b);
      if (o.sort == "longest") return longest_of(*a) > longest_of(*b);
      return a->polls > b->polls;
    });
    bool figures = std::any_of(tasks.begin(), tasks.end(), [](const TaskInfo* t) { return t->figures.has_value(); });
    std::printf("\n%-8s %-24s %-10s %12s %10s %10s %6s", "TASK", "NAME", "STATE", "POLLS", "POLLS/S", "AGE", "WAKERS");
    if (figures) std::printf(" %9s %9s %9s %9s %9s %9s", "SELFWAKES", "WAKES", "BUSY", "SCHED", "IDLE", "LONGEST");
    std::printf("   (%zu tasks, by %s)\n", tasks.size(), o.sort.c_str());
    for (std::size_t i = 0; i < tasks.size() && i < o.tasks; ++i) {
      const TaskInfo& t = *tasks[i];
      std::string rate = before != nullptr ? std::to_string(static_cast<long long>(rate_of(&t))) : "-";
      std::string name = t.name.empty() ? "-" : pollux::printable(t.name);
      std::printf("%-8llu %-24.24s %-10s %12llu %10s %10s %6llu", static_cast<unsigned long long>(t.id), name.c_str(),
                  pollux::to_string(t.state), static_cast<unsigned long long>(t.polls), rate.c_str(),
                  duration_text(t.age).c_str(), static_cast<unsigned long long>(t.wakers));
      if (const auto& f = t.figures) {
        std::printf(" %9llu %9llu %9s %9s %9s %9s", static_cast<unsigned long long>(f->wakes_by_self),
                    static_cast<unsigned long long>(f->wakes_by_others), duration_text(f->busy).c_str(),
                    duration_text(f->scheduled).c_str(), duration_text(f->idle).c_str(),
                    duration_text(f->longest_poll).c_str());
      }
      std::printf("\n");
    }
    if (tasks.size() > o.tasks) std::printf("... %zu more (--tasks=N shows more)\n", tasks.size() - o.tasks);
  }
  std::vector<std::string> notes = warnings(before, s);
  if (!notes.empty()) std::printf("\n");
  for (const std::string& note : notes) std::printf("warning: %s\n", note.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse_options(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "pollux-console: %s\n%s", error.what(), kUsage);
    return 2;
  }
  try {
    if (o.once) {
      print(o, nullptr, fetch(o.socket));
      return 0;
    }
    std::optional<ConsoleSnapshot> before;
    for (;;) {
      ConsoleSnapshot now = fetch(o.socket);
      std::printf("\x1b[H\x1b[2J");  // home, clear: a fresh screen each time, as top does
      print(o, before ? &*before : nullptr, now);
      before = std::move(now);
      std::this_thread::sleep_for(std::chrono::duration<double>(o.interval_s));
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "pollux-console: %s\n", error.what());
    return 1;
  }
}
