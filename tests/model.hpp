// A small systematic model checker in the spirit of loom and CHESS, for
// code written over an atomic type that is a template parameter. Each model
// thread is a real thread, but only one runs at a time: every operation on
// a model::Atomic is a scheduling point where the checker decides which
// thread goes next. It runs a scenario once per schedule, depth first, until
// every schedule with at most `preemption_bound` preemptions was explored
// (a preemption: switching away from a thread that could have gone on).
//
// Operations are sequentially consistent here (memory orders are ThreadSanitizer's
// business); code between two scheduling points runs as one atomic step.
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <semaphore>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace model {

/// A broken invariant found under some schedule.
struct Violation : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Checker;

namespace detail {
inline Checker* active = nullptr;       // the checker running a scenario, if any
inline thread_local int self = -1;      // this thread's index in the scenario; -1: not a model thread
inline std::string failure;             // the first broken invariant of this execution
}  // namespace detail

/// Explores one scenario: `setup` runs first on the calling thread, then the
/// threads under each schedule, then `finish` on the calling thread.
class Checker {
 public:
  explicit Checker(int preemption_bound) : bound_(preemption_bound) {}

  /// Runs `threads` under every schedule; `scenario()` must build fresh state
  /// and return the thread bodies and the final check each time. Returns the
  /// number of executions; throws Violation, naming the schedule, on the first
  /// broken invariant.
  struct Execution {
    std::vector<std::function<void()>> threads;
    std::function<void()> finish;
  };
  std::uint64_t explore(const std::function<Execution()>& scenario) {
    std::uint64_t executions = 0;
    trail_.clear();
    for (;;) {
      run_once(scenario());
      ++executions;
      if (!backtrack()) return executions;
    }
  }

  /// A scheduling point of the calling thread (no-op outside a model thread).
  void yield() {
    if (detail::self < 0) return;
    int me = detail::self;
    switch_to(choose(me), me, false);
  }

 private:
  struct Decision {
    std::vector<int> enabled;  // threads that could run here
    int current;               // the thread that reached this point (-1: none)
    int chosen;
    std::vector<int> tried;
    int preemptions_before;
  };

  int choose(int current) {
    std::vector<int> enabled;
    for (int i = 0; i < static_cast<int>(done_.size()); ++i) {
      if (!done_[i]) enabled.push_back(i);
    }
    if (enabled.empty()) return -1;
    int preemptions = depth_ == 0 ? 0 : preemptions_after(depth_ - 1);
    int chosen;
    if (depth_ < trail_.size()) {
      chosen = trail_[depth_].chosen;  // replaying the prefix
    } else {
      bool current_enabled = current >= 0 && !done_[current];
      chosen = current_enabled ? current : enabled.front();
      trail_.push_back(Decision{enabled, current, chosen, {chosen}, preemptions});
    }
    ++depth_;
    return chosen;
  }

  int preemptions_after(std::size_t k) const {
    const Decision& d = trail_[k];
    bool preempted = d.current >= 0 && d.chosen != d.current &&
                     std::find(d.enabled.begin(), d.enabled.end(), d.current) != d.enabled.end();
    return d.preemptions_before + (preempted ? 1 : 0);
  }

  // The next schedule: the deepest decision with an untried alternative
  // within the bound.
  bool backtrack() {
    while (!trail_.empty()) {
      Decision& d = trail_.back();
      for (int t : d.enabled) {
        if (std::find(d.tried.begin(), d.tried.end(), t) != d.tried.end()) continue;
        bool preempts = d.current >= 0 && t != d.current &&
                        std::find(d.enabled.begin(), d.enabled.end(), d.current) != d.enabled.end();
        if (d.preemptions_before + (preempts ? 1 : 0) > bound_) continue;
        d.tried.push_back(t);
        d.chosen = t;
        return true;
      }
      trail_.pop_back();
    }
    return false;
  }

  // Hands the turn to `next` (-1: back to the caller of explore) and, unless
  // the calling thread has finished, waits for the turn to come back. Once
  // the turn is handed over, nothing shared may be read: the next execution
  // may already have begun.
  void switch_to(int next, int me, bool finished) {
    if (next != me) {
      (next >= 0 ? workers_[next]->go : main_go_).release();
      if (!finished) workers_[me]->go.acquire();
    }
  }

  // Each model thread is a worker that lives as long as the checker: a
  // scenario runs hundreds of times, and starting threads each time would
  // cost more than the scenario.
  struct Worker {
    std::binary_semaphore go{0};
    std::function<void()> body;
    std::thread thread;
  };

  void work(int i, Worker& self) {
    detail::self = i;
    for (;;) {
      self.go.acquire();
      if (stopping_) return;
      self.body();
      done_[i] = true;
      switch_to(choose(i), i, true);
    }
  }

  void run_once(Execution execution) {
    const int n = static_cast<int>(execution.threads.size());
    while (static_cast<int>(workers_.size()) < n) {
      workers_.push_back(std::make_unique<Worker>());
      int i = static_cast<int>(workers_.size()) - 1;
      workers_.back()->thread = std::thread([this, i, w = workers_.back().get()] { work(i, *w); });
    }
    for (int i = 0; i < n; ++i) workers_[i]->body = std::move(execution.threads[i]);
    done_.assign(n, false);
    depth_ = 0;
    detail::failure.clear();
    detail::active = this;
    int first = choose(-1);
    workers_[first]->go.release();
    main_go_.acquire();  // the last thread to finish hands the turn back
    detail::active = nullptr;
    if (detail::failure.empty()) execution.finish();
    if (!detail::failure.empty()) throw Violation(detail::failure + "\n  under schedule (thread per step): " + schedule_text());
  }

 public:
  ~Checker() {
    stopping_ = true;
    for (auto& w : workers_) w->go.release();
    for (auto& w : workers_) w->thread.join();
  }

 private:
  std::string schedule_text() const {
    std::string text;
    for (std::size_t k = 0; k < depth_ && k < trail_.size(); ++k) {
      text += std::to_string(trail_[k].chosen);
      text += ' ';
    }
    return text;
  }

  int bound_;
  std::vector<Decision> trail_;
  std::size_t depth_ = 0;
  std::vector<char> done_;  // written only by the thread that holds the turn
  std::vector<std::unique_ptr<Worker>> workers_;
  std::binary_semaphore main_go_{0};
  bool stopping_ = false;
};

/// Records a broken invariant: the execution runs on (the code under test
/// may be noexcept), and explore throws once it ended.
inline void check(bool cond, const char* what) {
  if (!cond && detail::failure.empty()) detail::failure = what;
}

/// A scheduling point: the checker may run another thread here.
inline void yield() {
  if (detail::active != nullptr) detail::active->yield();
}

/// Memory the scenario freed; an atomic operation on it is a use after free.
inline std::vector<std::pair<const void*, std::size_t>> freed;

inline bool is_freed(const void* p) {
  for (auto [start, size] : freed) {
    auto* s = static_cast<const char*>(start);
    if (static_cast<const char*>(p) >= s && static_cast<const char*>(p) < s + size) return true;
  }
  return false;
}

/// std::atomic's interface; each operation is a scheduling point, checked
/// against freed memory, and then runs as one step.
template <class T>
class Atomic {
 public:
  explicit Atomic(T v) noexcept : value_(v) {}

  T load(std::memory_order = std::memory_order_seq_cst) const noexcept { return (point(), value_); }
  void store(T v, std::memory_order = std::memory_order_seq_cst) noexcept {
    point();
    value_ = v;
  }
  T fetch_add(T d, std::memory_order = std::memory_order_seq_cst) noexcept { return (point(), std::exchange(value_, value_ + d)); }
  T fetch_sub(T d, std::memory_order = std::memory_order_seq_cst) noexcept { return (point(), std::exchange(value_, value_ - d)); }
  T fetch_or(T d, std::memory_order = std::memory_order_seq_cst) noexcept { return (point(), std::exchange(value_, value_ | d)); }
  T fetch_and(T d, std::memory_order = std::memory_order_seq_cst) noexcept { return (point(), std::exchange(value_, value_ & d)); }
  // Never fails spuriously: a spurious failure only repeats a loop's iteration.
  bool compare_exchange_weak(T& expected, T desired, std::memory_order = std::memory_order_seq_cst,
                             std::memory_order = std::memory_order_seq_cst) noexcept {
    point();
    if (value_ == expected) {
      value_ = desired;
      return true;
    }
    expected = value_;
    return false;
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order a = std::memory_order_seq_cst,
                               std::memory_order b = std::memory_order_seq_cst) noexcept {
    return compare_exchange_weak(expected, desired, a, b);
  }

 private:
  void point() const noexcept {
    yield();
    check(!is_freed(this), "an atomic operation on freed memory (use after free)");
  }

  T value_;
};

}  // namespace model
