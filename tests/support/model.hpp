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
//
// A thread may also block: on a Mutex held by another, in futex_wait, in an
// Atomic's wait, or in spin() (a spin loop's hint: it cannot go on until
// another thread writes something). A blocked thread is not scheduled; when
// every unfinished thread is blocked, the execution deadlocked (a lost
// wake-up, usually), which is a broken invariant like any other.
//
// The library's concurrency vocabulary (pollux/core/detail/concurrency.hpp)
// compiles to these types when POLLUX_MODEL is defined, so a model build of
// the library runs its real protocols under the checker.
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <semaphore>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
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
inline Checker* active = nullptr;   // the checker running a scenario, if any
inline thread_local int self = -1;  // this thread's index in the scenario; -1: not a model thread
inline std::string failure;         // the first broken invariant of this execution
inline std::uint64_t writes = 0;    // shared writes so far in this execution (for spin())
// Notifies per Atomic in this execution, kept aside so that a model Atomic
// has the size of the value, as std::atomic does (layouts stay the same).
inline std::map<const void*, std::uint64_t> notifies;
// Blocks freed by the scenario, released only once its execution ended.
struct Quarantined {
  void* block;
  void (*release)(void*);
};
inline std::vector<Quarantined> quarantine;
inline void release_quarantine();
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
    if (depth_ >= kMaxSteps) runaway(me);
    switch_to(choose(me), me, false);
  }

  /// A scheduling point after which the calling thread runs only once
  /// `can_go()` holds (it is called with the turn held, by whichever thread
  /// is choosing). Outside a model thread `can_go()` must already hold.
  void block_until(std::function<bool()> can_go) {
    if (detail::self < 0) return;
    int me = detail::self;
    blocked_[me] = std::move(can_go);
    int next = choose(me);
    if (next < 0) {
      deadlock();
      workers_[me]->go.acquire();  // nobody can run: never released again
    }
    switch_to(next, me, false);
    blocked_[me] = nullptr;
  }

 private:
  struct Decision {
    std::vector<int> enabled;  // threads that could run here
    int current;               // the thread that reached this point (-1: none)
    int chosen;
    std::vector<int> tried;
    int preemptions_before;
  };

  bool runnable(int i) const { return !done_[i] && (!blocked_[i] || blocked_[i]()); }

  int choose(int current) {
    std::vector<int> enabled;
    for (int i = 0; i < static_cast<int>(done_.size()); ++i) {
      if (runnable(i)) enabled.push_back(i);
    }
    if (enabled.empty()) return -1;
    int preemptions = depth_ == 0 ? 0 : preemptions_after(depth_ - 1);
    int chosen;
    if (depth_ < trail_.size()) {
      chosen = trail_[depth_].chosen;  // replaying the prefix
    } else {
      bool current_enabled = current >= 0 && runnable(current);
      chosen = current_enabled ? current : enabled.front();
      trail_.push_back(Decision{enabled, current, chosen, {chosen}, preemptions});
    }
    ++depth_;
    return chosen;
  }

  int preemptions_after(std::size_t k) const {
    const Decision& d = trail_[k];
    bool preempted = d.current >= 0 && d.chosen != d.current
                     && std::find(d.enabled.begin(), d.enabled.end(), d.current) != d.enabled.end();
    return d.preemptions_before + (preempted ? 1 : 0);
  }

  // The next schedule: the deepest decision with an untried alternative
  // within the bound.
  bool backtrack() {
    while (!trail_.empty()) {
      Decision& d = trail_.back();
      for (int t : d.enabled) {
        if (std::find(d.tried.begin(), d.tried.end(), t) != d.tried.end()) continue;
        bool preempts = d.current >= 0 && t != d.current
                        && std::find(d.enabled.begin(), d.enabled.end(), d.current) != d.enabled.end();
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
      int next = choose(i);
      if (next < 0 && std::find(done_.begin(), done_.end(), false) != done_.end()) {
        deadlock();  // the others wait for what this thread will never do
        return;
      }
      switch_to(next, i, true);
    }
  }

  // Every unfinished thread is blocked. The execution ends here with a
  // broken invariant; the blocked threads never run again, so the checker
  // cannot be used any more and its threads are left behind at the end.
  void deadlock() {
    std::string who;
    for (int i = 0; i < static_cast<int>(done_.size()); ++i) {
      if (!done_[i]) who += (who.empty() ? "" : ", ") + std::to_string(i);
    }
    end_broken("deadlock: thread(s) " + who + " blocked for ever, nobody left to wake them (a lost wake-up)");
  }

  // An execution this long is a loop that makes no progress (a livelock,
  // or a walk that never ends): it ends as a deadlock does, and the
  // looping thread stops here for good.
  static constexpr std::size_t kMaxSteps = 20000;
  void runaway(int me) {
    end_broken("runaway: thread " + std::to_string(me) + " still going after " + std::to_string(kMaxSteps)
               + " steps (a livelock, or a loop that never ends)");
    workers_[me]->go.acquire();  // never released again
  }

  void end_broken(std::string why) {
    if (detail::failure.empty()) detail::failure = std::move(why);
    broken_ = true;
    main_go_.release();
  }

  void run_once(Execution execution) {
    const int n = static_cast<int>(execution.threads.size());
    while (static_cast<int>(workers_.size()) < n) {
      workers_.push_back(std::make_unique<Worker>());
      int i = static_cast<int>(workers_.size()) - 1;
      workers_.back()->thread = std::thread([this, i, w = workers_.back().get()] { work(i, *w); });
    }
    if (broken_) throw Violation("the checker deadlocked in an earlier execution and cannot run another");
    for (int i = 0; i < n; ++i) workers_[i]->body = std::move(execution.threads[i]);
    detail::release_quarantine();  // the last execution's state is gone with its bodies
    done_.assign(n, false);
    blocked_.assign(n, nullptr);
    depth_ = 0;
    detail::failure.clear();
    detail::writes = 0;
    detail::notifies.clear();
    detail::active = this;
    int first = choose(-1);
    workers_[first]->go.release();
    main_go_.acquire();  // the last thread to finish hands the turn back
    detail::active = nullptr;
    if (detail::failure.empty()) execution.finish();
    if (!detail::failure.empty())
      throw Violation(detail::failure + "\n  under schedule (thread per step): " + schedule_text());
  }

 public:
  ~Checker() {
    stopping_ = true;
    for (auto& w : workers_) {
      if (broken_) {
        w->thread.detach();  // possibly blocked for ever; its Worker is leaked with it
        (void)w.release();
      } else {
        w->go.release();
        w->thread.join();
        w->body = nullptr;
      }
    }
    if (!broken_) detail::release_quarantine();
  }

 private:
  // The thread of each step; a long schedule (a runaway) shows its first
  // steps and its length.
  std::string schedule_text() const {
    constexpr std::size_t kShown = 200;
    std::size_t steps = std::min(depth_, trail_.size());
    std::string text;
    for (std::size_t k = 0; k < steps && k < kShown; ++k) {
      text += std::to_string(trail_[k].chosen);
      text += ' ';
    }
    if (steps > kShown) text += "... (" + std::to_string(steps) + " steps)";
    return text;
  }

  int bound_;
  std::vector<Decision> trail_;
  std::size_t depth_ = 0;
  std::vector<char> done_;                      // written only by the thread that holds the turn
  std::vector<std::function<bool()>> blocked_;  // per thread: when it may go on (null: now)
  bool broken_ = false;                         // an execution deadlocked
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

/// A scheduling point after which the calling thread waits until `can_go()`.
inline void block_until(std::function<bool()> can_go) {
  if (detail::active != nullptr) {
    detail::active->block_until(std::move(can_go));
  } else if (!can_go()) {
    throw std::logic_error("model: a thread blocked outside a model thread, where nobody can wake it");
  }
}

/// A spin loop's hint: the caller goes on only after another thread wrote
/// something (spinning again on an unchanged world would repeat the same
/// step for ever).
inline void spin() {
  std::uint64_t seen = detail::writes;
  block_until([seen] { return detail::writes != seen; });
}

/// Memory the scenario freed, by start address: its size. An atomic
/// operation or a lock on it is a use after free.
inline std::map<const char*, std::size_t> freed;

/// Marks `block` freed, so that an atomic operation on it is a use after
/// free, and releases it with `release` only after the execution: a later
/// allocation in the same execution cannot reuse its address and hide the
/// use. A block freed twice is a broken invariant (and released once).
inline void free_later(void* block, std::size_t size, void (*release)(void*)) {
  if (!freed.emplace(static_cast<const char*>(block), size).second) {
    check(false, "a block freed twice (a double free)");
    return;
  }
  detail::quarantine.push_back({block, release});
}

inline void detail::release_quarantine() {
  for (auto [block, release] : quarantine) {
    freed.erase(static_cast<const char*>(block));
    release(block);
  }
  quarantine.clear();
}

inline bool is_freed(const void* p) {
  auto* at = static_cast<const char*>(p);
  auto after = freed.upper_bound(at);
  if (after == freed.begin()) return false;
  auto [start, size] = *std::prev(after);
  return at < start + size;
}

/// std::atomic's interface; each operation is a scheduling point, checked
/// against freed memory, and then runs as one step.
template <class T>
class Atomic {
 public:
  Atomic() noexcept : value_() {}
  constexpr Atomic(T v) noexcept : value_(v) {}  // NOLINT: as std::atomic's
  Atomic(const Atomic&) = delete;
  Atomic& operator=(const Atomic&) = delete;

  T load(std::memory_order = std::memory_order_seq_cst) const noexcept { return (point(), value_); }
  void store(T v, std::memory_order = std::memory_order_seq_cst) noexcept {
    point();
    write(v);
  }
  T exchange(T v, std::memory_order = std::memory_order_seq_cst) noexcept { return (point(), write(v)); }
  T fetch_add(T d, std::memory_order = std::memory_order_seq_cst) noexcept { return (point(), write(value_ + d)); }
  T fetch_sub(T d, std::memory_order = std::memory_order_seq_cst) noexcept { return (point(), write(value_ - d)); }
  T fetch_or(T d, std::memory_order = std::memory_order_seq_cst) noexcept { return (point(), write(value_ | d)); }
  T fetch_and(T d, std::memory_order = std::memory_order_seq_cst) noexcept { return (point(), write(value_ & d)); }
  T fetch_xor(T d, std::memory_order = std::memory_order_seq_cst) noexcept { return (point(), write(value_ ^ d)); }
  // Never fails spuriously: a spurious failure only repeats a loop's iteration.
  bool compare_exchange_weak(T& expected, T desired, std::memory_order = std::memory_order_seq_cst,
                             std::memory_order = std::memory_order_seq_cst) noexcept {
    point();
    if (value_ == expected) {
      write(desired);
      return true;
    }
    expected = value_;
    return false;
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order a = std::memory_order_seq_cst,
                               std::memory_order b = std::memory_order_seq_cst) noexcept {
    return compare_exchange_weak(expected, desired, a, b);
  }

  /// Blocks while the value is `old`, until a notify that comes after the
  /// change (no spurious return: a caller's loop is explored either way).
  /// A change nobody notifies leaves the waiter blocked: a deadlock.
  void wait(T old, std::memory_order = std::memory_order_seq_cst) const noexcept {
    for (;;) {
      point();
      if (value_ != old) return;
      std::uint64_t seen = detail::notifies[this];
      block_until([this, seen] { return detail::notifies[this] != seen; });
    }
  }
  void notify_one() noexcept { notify(); }
  void notify_all() noexcept { notify(); }

 private:
  void point() const noexcept {
    yield();
    check(!is_freed(this), "an atomic operation on freed memory (use after free)");
  }
  T write(T v) noexcept {
    ++detail::writes;
    return std::exchange(value_, v);
  }
  void notify() noexcept {
    point();
    ++detail::notifies[this];  // every waiter re-checks; one whose value is unchanged waits again
  }

  T value_;
};

/// A futex on an Atomic<std::int32_t>: futex_wait sleeps while the word
/// is `expected`, until a futex_wake_one after it began (which wakes every
/// waiter in the model: a real futex may wake any one, and they re-check).
inline void futex_wait(Atomic<std::int32_t>& word, std::int32_t expected) noexcept { word.wait(expected); }
inline void futex_wake_one(Atomic<std::int32_t>& word) noexcept { word.notify_one(); }

/// A mutex: lock() blocks while another thread holds it; locking it twice
/// from one thread, or unlocking it unheld, is a broken invariant.
class Mutex {
 public:
  void lock() noexcept {
    yield();
    check(!is_freed(this), "a lock of a mutex in freed memory (use after free)");
    check(owner_ != detail::self, "a thread locked a mutex it holds");
    block_until([this] { return owner_ == kFree; });
    owner_ = detail::self;
    ++detail::writes;
  }
  bool try_lock() noexcept {
    yield();
    if (owner_ != kFree) return false;
    owner_ = detail::self;
    ++detail::writes;
    return true;
  }
  void unlock() noexcept {
    check(!is_freed(this), "an unlock of a mutex in freed memory (use after free)");
    check(owner_ == detail::self, "a mutex unlocked by a thread that does not hold it");
    owner_ = kFree;
    ++detail::writes;
    yield();
  }

 private:
  static constexpr int kFree = -2;  // -1 is the calling thread outside the model
  int owner_ = kFree;
};

/// A condition variable: wait() lets go of the lock and blocks until a
/// notify after it began (no spurious wake-ups: the caller's loop is
/// explored either way), then takes the lock again.
class CondVar {
 public:
  template <class Lock>
  void wait(Lock& lock) {
    std::uint64_t seen = notifies_;
    lock.unlock();
    block_until([this, seen] { return notifies_ != seen; });
    lock.lock();
  }
  template <class Lock, class Predicate>
  void wait(Lock& lock, Predicate ready) {
    while (!ready()) wait(lock);
  }
  void notify_one() noexcept { notify_all(); }  // every waiter re-checks
  void notify_all() noexcept {
    yield();
    ++notifies_;
    ++detail::writes;
  }

 private:
  std::uint64_t notifies_ = 0;
};

}  // namespace model
