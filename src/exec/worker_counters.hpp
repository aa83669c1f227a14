// A worker's counts behind ExecutorMetrics, shared by ThreadPool's workers
// and LocalExecutor. Only the worker's thread writes them (Counter's
// add_owned: an ordinary add); metrics() reads them from any thread. Polls,
// the one count on every task's path, are added up in a plain field and
// published at each park and every kEventInterval tasks (as tokio's
// MetricsBatch does): a snapshot may lag a busy worker by that many. A clock
// is read only around a park (the time-stamp counter, one instruction), and
// around each poll only for an executor made to measure histograms.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "../core/metrics.hpp"
#include "pollux/core/coop.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/tick_clock.hpp"
#include "pollux/exec/duration_histogram.hpp"
#include "pollux/exec/executor_metrics.hpp"
#include "pollux/task/detail/header.hpp"
#include "pollux/task/runnable.hpp"

namespace pollux::detail {

/// The clock of busy time and histograms: steady_clock, in nanoseconds.
inline std::int64_t metrics_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// A DurationHistogram that one thread records into.
struct HistogramCounters {
  std::array<Counter, DurationHistogram::kBuckets> buckets;
  Counter sum_ns;

  void record(std::int64_t ns) noexcept {
    count(buckets[DurationHistogram::bucket_of(std::chrono::nanoseconds(ns))]);
    count(sum_ns, static_cast<std::uint64_t>(std::max<std::int64_t>(ns, 0)));
  }
  DurationHistogram snapshot() const noexcept {
    DurationHistogram out;
    for (std::size_t i = 0; i < buckets.size(); ++i) out.counts[i] = buckets[i].get();
    out.sum = std::chrono::nanoseconds(sum_ns.get());
    return out;
  }
};

struct WorkerCounters {
  Counter polls;  // published from polls_so_far
  Counter steals;
  Counter steal_operations;
  Counter overflows;
  Counter parks;
  Counter unparks;
  Counter parked_ticks;        // asleep, over the parks that ended (TickClock)
  Counter park_started_ticks;  // when the park in progress began; 0 while awake
  HistogramCounters poll_duration;
  HistogramCounters schedule_latency;
  std::uint64_t polls_so_far = 0;  // owner only

  WorkerCounters() noexcept { (void)TickClock::now(); }  // fixes the clock's origin before the first park

  void note_poll() noexcept {
    if constexpr (kMetrics) ++polls_so_far;
  }
  void note_polls(std::uint64_t n) noexcept {
    if constexpr (kMetrics) polls_so_far += n;
  }
  // What the owner counted in plain fields, made visible to metrics().
  void publish() noexcept {
    if constexpr (kMetrics) polls.set_owned(polls_so_far);
  }

  void begin_park() noexcept {
    publish();
    count(parks);
    if constexpr (kMetrics) park_started_ticks.set_owned(TickClock::now() | 1);  // never 0, "awake"
  }
  void end_park() noexcept {
    if constexpr (kMetrics) {
      // The sleep is added before the park is closed: a snapshot between
      // the two counts it twice (busy reads low for a moment, clamped at
      // zero) rather than not at all (an idle worker read as busy).
      std::uint64_t began = park_started_ticks.get();
      count(parked_ticks, TickClock::now() - began);
      park_started_ticks.set_owned(0);
    }
  }

  /// `started_ns`: when the worker started; `depth`: its queue's length.
  WorkerMetrics snapshot(std::int64_t now_ns, std::int64_t started_ns, std::size_t depth) const noexcept {
    WorkerMetrics out;
    out.polls = polls.get();
    out.steals = steals.get();
    out.steal_operations = steal_operations.get();
    out.overflows = overflows.get();
    out.parks = parks.get();
    out.unparks = unparks.get();
    if constexpr (kMetrics) {
      // Read while the worker moves on: clamped, so a park that began or
      // ended in between never makes busy time negative or larger than up time.
      std::uint64_t now_ticks = TickClock::now();
      std::uint64_t asleep_ticks = parked_ticks.get();
      std::uint64_t began = park_started_ticks.get();
      if (began != 0 && began < now_ticks) asleep_ticks += now_ticks - began;
      auto asleep =
          static_cast<std::int64_t>(static_cast<double>(asleep_ticks) * TickClock::ns_per_tick(now_ns, now_ticks));
      std::int64_t up = now_ns - started_ns;
      out.busy = std::chrono::nanoseconds(std::clamp<std::int64_t>(up - asleep, 0, std::max<std::int64_t>(up, 0)));
    }
    out.local_queue_depth = depth;
    return out;
  }
};

/// For an executor that measures schedule latency: stamps `task` as it is
/// queued.
inline void stamp_scheduled(TaskHeader* task) noexcept {
  meta_of(task).scheduled_us = static_cast<std::uint32_t>(metrics_now_ns() / 1000);
}

/// An executor's scheduler `Base` that stamps each task as it is queued,
/// for schedule latency: made only for an executor that measures
/// histograms, so that the others' wakes never test for them.
template <class Base>
class StampingScheduler final : public Base {
 public:
  using Base::Base;
  void schedule(Runnable runnable) override {
    stamp_scheduled(runnable.header());
    Base::schedule(std::move(runnable));
  }
};

/// Runs `task` once, under a fresh cooperative budget (the caller holds a
/// coop::BudgetScope around its loop), as an executor's loop does; with `kMeasured` (an executor that measures
/// histograms) it records the task's schedule latency and its poll's duration too. Returns whether the task finished.
template <bool kMeasured>
bool run_task_once(WorkerCounters& counters, TaskHeader* task) {
  auto run = [task] {
    coop::refill();
    return Runnable::adopt(task).run_retaining();
  };
  if constexpr (!kMeasured) {
    return run();
  } else {
    std::int64_t begin = metrics_now_ns();
    std::uint32_t waited_us = static_cast<std::uint32_t>(begin / 1000) - meta_of(task).scheduled_us;
    counters.schedule_latency.record(std::int64_t{waited_us} * 1000);
    bool finished = run();
    counters.poll_duration.record(metrics_now_ns() - begin);
    return finished;
  }
}

}  // namespace pollux::detail
