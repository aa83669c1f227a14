// A RuntimeMetrics snapshot in Prometheus's text exposition format
// (version 0.0.4): one family per figure, counters ending in _total, one
// series per worker labelled worker="i", and the two duration histograms
// in seconds with cumulative buckets, as a Prometheus server scrapes them.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

#include <pollux/pollux.hpp>

namespace prometheus {

namespace exposition {

inline void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

inline void sample(std::string& out, std::string_view name, std::string_view labels, double value) {
  char number[64];
  // Counts as whole numbers (exact below 2^53), times with nine digits.
  if (value == static_cast<double>(static_cast<long long>(value)) && value < 9007199254740992.0) {
    std::snprintf(number, sizeof number, "%lld", static_cast<long long>(value));
  } else {
    std::snprintf(number, sizeof number, "%.9g", value);
  }
  out.append(name);
  if (!labels.empty()) out.append("{").append(labels).append("}");
  out.append(" ").append(number).append("\n");
}

inline double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

inline std::string worker_label(std::size_t i) { return "worker=\"" + std::to_string(i) + "\""; }

// One figure of every worker: `get(worker)` gives its value.
template <class Get>
void per_worker(std::string& out, const pollux::ExecutorMetrics& m, std::string_view name, std::string_view type,
                std::string_view help, Get get) {
  family(out, name, type, help);
  for (std::size_t i = 0; i < m.worker.size(); ++i) sample(out, name, worker_label(i), get(m.worker[i]));
}

inline void histogram(std::string& out, std::string_view name, std::string_view help,
                      const pollux::DurationHistogram& h) {
  family(out, name, "histogram", help);
  std::string bucket = std::string(name) + "_bucket";
  std::uint64_t below = 0;
  char label[64];
  for (std::size_t i = 0; i + 1 < pollux::DurationHistogram::kBuckets; ++i) {
    below += h.counts[i];
    std::snprintf(label, sizeof label, "le=\"%.9g\"", seconds(pollux::DurationHistogram::upper_bound(i)));
    sample(out, bucket, label, static_cast<double>(below));
  }
  sample(out, bucket, "le=\"+Inf\"", static_cast<double>(h.total()));
  sample(out, std::string(name) + "_sum", "", seconds(h.sum));
  sample(out, std::string(name) + "_count", "", static_cast<double>(h.total()));
}

}  // namespace exposition

/// `m` as Prometheus text: the families named pollux_*.
inline std::string text(const pollux::RuntimeMetrics& m) {
  using exposition::family;
  using exposition::sample;
  const pollux::ExecutorMetrics& e = m.executor;
  std::string out;
  out.reserve(4096 + 1024 * e.worker.size());
  auto one = [&](std::string_view name, std::string_view type, std::string_view help, double value) {
    family(out, name, type, help);
    sample(out, name, "", value);
  };
  one("pollux_workers", "gauge", "Worker threads that run tasks.", static_cast<double>(e.workers));
  one("pollux_uptime_seconds", "gauge", "Time since the executor started.", exposition::seconds(e.uptime));
  one("pollux_tasks_live", "gauge", "Tasks spawned and not yet ended.", static_cast<double>(e.live_tasks));
  one("pollux_tasks_spawned_total", "counter", "Tasks spawned.", static_cast<double>(e.spawned_tasks));
  one("pollux_tasks_finished_total", "counter", "Tasks that completed, failed or were cancelled.",
      static_cast<double>(e.finished_tasks));
  one("pollux_inject_queue_depth", "gauge", "Tasks waiting in the queue every worker takes from.",
      static_cast<double>(e.inject_queue_depth));
  using W = pollux::WorkerMetrics;
  exposition::per_worker(out, e, "pollux_worker_polls_total", "counter", "Tasks polled.",
                         [](const W& w) { return static_cast<double>(w.polls); });
  exposition::per_worker(out, e, "pollux_worker_steals_total", "counter", "Tasks taken from other workers' queues.",
                         [](const W& w) { return static_cast<double>(w.steals); });
  exposition::per_worker(out, e, "pollux_worker_steal_operations_total", "counter",
                         "Steals that took at least one task.",
                         [](const W& w) { return static_cast<double>(w.steal_operations); });
  exposition::per_worker(out, e, "pollux_worker_overflows_total", "counter",
                         "Times a full local queue moved half of itself to the inject queue.",
                         [](const W& w) { return static_cast<double>(w.overflows); });
  exposition::per_worker(out, e, "pollux_worker_parks_total", "counter", "Times the worker went to sleep.",
                         [](const W& w) { return static_cast<double>(w.parks); });
  exposition::per_worker(out, e, "pollux_worker_unparks_total", "counter", "Times the worker woke with work to do.",
                         [](const W& w) { return static_cast<double>(w.unparks); });
  exposition::per_worker(out, e, "pollux_worker_busy_seconds_total", "counter", "Time the worker spent awake.",
                         [](const W& w) { return exposition::seconds(w.busy); });
  exposition::per_worker(out, e, "pollux_worker_local_queue_depth", "gauge", "Tasks waiting in the worker's queue.",
                         [](const W& w) { return static_cast<double>(w.local_queue_depth); });
  if (e.histograms) {
    exposition::histogram(out, "pollux_poll_duration_seconds", "How long each poll of a task took.", e.poll_duration);
    exposition::histogram(out, "pollux_schedule_latency_seconds",
                          "How long each task waited from its wake to its poll.", e.schedule_latency);
  }
  one("pollux_driver_socket_events_total", "counter", "Socket readiness events dispatched from epoll.",
      static_cast<double>(m.driver.socket_events));
  one("pollux_driver_uring_completions_total", "counter", "io_uring completions reaped.",
      static_cast<double>(m.driver.uring_completions));
  one("pollux_driver_timers_fired_total", "counter", "Timers that fired.", static_cast<double>(m.driver.timers_fired));
  one("pollux_blocking_threads", "gauge", "Threads of the blocking pool.", static_cast<double>(m.blocking.threads));
  one("pollux_blocking_idle_threads", "gauge", "Blocking-pool threads waiting for a job.",
      static_cast<double>(m.blocking.idle_threads));
  one("pollux_blocking_queue_depth", "gauge", "Blocking jobs waiting for a thread.",
      static_cast<double>(m.blocking.queue_depth));
  one("pollux_blocking_jobs_submitted_total", "counter", "Blocking jobs submitted.",
      static_cast<double>(m.blocking.jobs_submitted));
  return out;
}

}  // namespace prometheus
