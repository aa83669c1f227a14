// A small systematic model checker in the spirit of loom and CHESS, for
// code written over an atomic type that is a template parameter. Each model
// thread is a real thread, but only one runs at a time: every operation on
// a model::Atomic is a scheduling point where the checker decides which
// thread goes next. It runs a scenario once per schedule, depth first, until
// every schedule with at most `preemption_bound` preemptions was explored
// (a preemption: switching away from a thread that could have gone on).
//
// It models the C++ memory model, not a sequentially consistent machine:
// - Happens-before is tracked with a vector clock per thread. A release
//   store (or a relaxed store after a release fence) carries its thread's
//   clock; an acquire load that reads it (or an acquire fence after a
//   relaxed load that read it) joins that clock. A read-modify-write carries
//   the clock of the store it read on, so release sequences hold.
// - Each atomic keeps its last kHistory stores in modification order (the
//   order in which the execution made them). A load may read any of them
//   that coherence allows: not older than what its thread already read or
//   wrote there, nor than a store that happens-before it, nor, for a
//   seq_cst load, than the last seq_cst store. The newest is tried first;
//   an older one is a decision the checker explores like a thread switch,
//   at most `stale_bound` times per execution. A read-modify-write, and a
//   compare-exchange that fails, read the newest store.
// - A non-atomic cell (model::Cell, the vocabulary's TrackedCell: a value a
//   protocol publishes) records its last write and the reads since; an
//   access not ordered by happens-before with a conflicting one is a data
//   race. Freeing a block is a write to all of it: an earlier access to an
//   atomic or a cell in it that does not happen-before the free is a race.
// - seq_cst fences are totally ordered among themselves and each joins the
//   clock of the ones before it (stronger than the standard asks, so it
//   never reports a race the standard allows).
// Code between two scheduling points runs as one atomic step.
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
#include <array>
#include <atomic>
#include <memory>
#include <semaphore>
#include <cstdint>
#include <cstdio>
#include <cstring>
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
inline void freeing(const char* block, std::size_t size);
inline void report_race(const char* what, const char* access, int other, const char* other_access);

// The memory model's state in this execution.
inline constexpr int kMaxThreads = 15;        // model threads per scenario
inline constexpr int kOutside = kMaxThreads;  // the clock of code outside model threads (setup, finish)
using Clock = std::array<std::uint32_t, kMaxThreads + 1>;

inline void join(Clock& into, const Clock& from) noexcept {
  for (std::size_t i = 0; i < into.size(); ++i) into[i] = std::max(into[i], from[i]);
}

struct ThreadView {
  Clock now{};      // the events that happen-before this thread's next one
  Clock pending{};  // what its relaxed loads read: an acquire fence joins it
  Clock fenced{};   // its clock at its last release fence
  bool has_fence = false;
  bool read_stale = false;  // a load read an older store than the newest since its last spin()
};
inline std::array<ThreadView, kMaxThreads + 1> views;
inline Clock sc_fences{};    // the clock of the last seq_cst fence
inline int stale_reads = 0;  // loads in this execution that read an older store than the newest

inline int slot() noexcept { return self < 0 ? kOutside : self; }
inline ThreadView& view() noexcept { return views[slot()]; }
// A new event of the calling thread: its stamp.
inline std::uint32_t tick() noexcept { return ++view().now[slot()]; }
// Whether the event `stamp` of `thread` happens-before the calling thread's next event.
inline bool seen(int thread, std::uint32_t stamp) noexcept { return stamp <= view().now[thread]; }

inline std::string thread_name(int thread) {
  return thread == kOutside ? std::string("outside the threads") : "thread " + std::to_string(thread);
}

// The bookkeeping of the checker allocates and frees: model_heap.hpp frees
// those blocks at once instead of checking them as the scenario's.
inline thread_local bool in_checker = false;
struct CheckerScope {
  bool was = std::exchange(in_checker, true);
  ~CheckerScope() { in_checker = was; }
};

/// How many stores of one atomic a load may choose among (loom keeps 7):
/// a load that reads a store older than the last few is a bug no test of
/// pollux's needs, and each one kept multiplies the executions.
inline constexpr std::size_t kHistory = 7;

struct StoreRecord {
  std::uint64_t bits;  // the value, as its object representation
  int thread;
  std::uint32_t stamp;
  Clock release{};  // what an acquire that reads it comes to see
  bool has_release = false;
};

struct Location {
  std::vector<StoreRecord> stores;                     // the last kHistory, in modification order
  std::uint64_t first = 0;                             // the index in modification order of stores[0]
  std::array<std::uint64_t, kMaxThreads + 1> floor{};  // per thread: the oldest store it may still read
  std::uint64_t last_seq_cst = 0;                      // the last seq_cst store's index
  std::array<std::uint32_t, kMaxThreads + 1> reads{};  // per thread: its last read's stamp (0: none)
  std::uint64_t last() const noexcept { return first + stores.size() - 1; }
  const StoreRecord& at(std::uint64_t index) const noexcept { return stores[index - first]; }
};
inline std::map<const char*, Location> locations;  // by address: each atomic touched in this execution

struct CellRecord {
  int writer = kOutside;
  std::uint32_t write_stamp = 0;                       // 0: written before the execution
  std::array<std::uint32_t, kMaxThreads + 1> reads{};  // since that write, per thread (0: none)
  const char* what = "a non-atomic cell";
};
inline std::map<const char*, CellRecord> cells;
inline std::map<const void*, Clock> lock_clocks;  // per Mutex: the clock of its last unlock

// A new execution: no thread has seen anything yet.
inline void reset_memory() {
  CheckerScope scope;
  views = {};
  sc_fences = {};
  stale_reads = 0;
  locations.clear();
  cells.clear();
  lock_clocks.clear();
}
}  // namespace detail

/// Explores one scenario: `setup` runs first on the calling thread, then the
/// threads under each schedule, then `finish` on the calling thread.
class Checker {
 public:
  /// Explores schedules with at most `preemption_bound` preemptions, and
  /// at most `stale_bound` loads per execution that read a store older
  /// than the newest. A weakened order shows as a data race on a cell, a
  /// free that races, or (for the orders between atomics alone) a stale
  /// read; the races need no stale read at all, and one stale read per
  /// execution is enough for the message-passing patterns of pollux's
  /// protocols (a flag read without the data it publishes).
  explicit Checker(int preemption_bound, int stale_bound = 1) : bound_(preemption_bound), stale_bound_(stale_bound) {}

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
      detail::reset_memory();
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

  /// A load's choice among `candidates` stores it may read, newest first:
  /// how many stores older than the newest it reads (0: the newest). An
  /// older one is a decision explored like a thread switch, while the
  /// execution's stale reads are under the bound.
  std::size_t choose_read(std::size_t candidates) {
    if (detail::self < 0 || candidates <= 1 || detail::stale_reads >= stale_bound_) return 0;
    if (depth_ < trail_.size()) {  // replaying the prefix
      if (trail_[depth_].current != kRead) {
        throw std::logic_error("model: a replayed schedule diverged (the scenario is not deterministic)");
      }
      int chosen = trail_[depth_++].chosen;
      if (chosen > 0) ++detail::stale_reads;
      return static_cast<std::size_t>(chosen);
    }
    std::vector<int> options(candidates);
    for (std::size_t i = 0; i < candidates; ++i) options[i] = static_cast<int>(i);
    int preemptions = depth_ == 0 ? 0 : preemptions_after(depth_ - 1);
    trail_.push_back(Decision{std::move(options), kRead, 0, {0}, preemptions});
    ++depth_;
    return 0;
  }

 private:
  struct Decision {
    std::vector<int> enabled;  // threads that could run here (kRead: the stores a load may read)
    int current;               // the thread that reached this point (-1: none; kRead: a load's choice)
    int chosen;
    std::vector<int> tried;
    int preemptions_before;
  };

  static constexpr int kRead = -2;

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
      if (trail_[depth_].current == kRead) {
        throw std::logic_error("model: a replayed schedule diverged (the scenario is not deterministic)");
      }
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
    if (n > detail::kMaxThreads) throw std::logic_error("model: more threads than model::detail::kMaxThreads");
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
    // Starting a thread happens-before its first step; its end, before
    // whatever comes after the execution (finish).
    detail::tick();
    for (int i = 0; i < n; ++i) {
      detail::views[i].now = detail::views[detail::kOutside].now;
      detail::views[i].now[i] = 1;
    }
    int first = choose(-1);
    workers_[first]->go.release();
    main_go_.acquire();  // the last thread to finish hands the turn back
    detail::active = nullptr;
    for (int i = 0; i < n; ++i) detail::join(detail::views[detail::kOutside].now, detail::views[i].now);
    detail::tick();
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
  // The thread of each step, and each load that read a store older than
  // the newest ("(read k older)"); a long schedule (a runaway) shows its
  // first steps and its length.
  std::string schedule_text() const {
    constexpr std::size_t kShown = 200;
    std::size_t steps = std::min(depth_, trail_.size());
    std::string text;
    for (std::size_t k = 0; k < steps && k < kShown; ++k) {
      if (trail_[k].current == kRead) {
        if (trail_[k].chosen == 0) continue;  // a load that read the newest store
        text += "(read " + std::to_string(trail_[k].chosen) + " older) ";
        continue;
      }
      text += std::to_string(trail_[k].chosen);
      text += ' ';
    }
    if (steps > kShown) text += "... (" + std::to_string(steps) + " steps)";
    return text;
  }

  int bound_;
  int stale_bound_;
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
/// A thread whose last loads read stale values goes on at once: on a
/// machine, the newer stores reach it without anyone writing again.
inline void spin() {
  if (detail::self >= 0 && std::exchange(detail::view().read_stale, false)) {
    yield();
    return;
  }
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
  detail::CheckerScope scope;
  if (!freed.emplace(static_cast<const char*>(block), size).second) {
    check(false, "a block freed twice (a double free)");
    return;
  }
  detail::quarantine.push_back({block, release});
  detail::freeing(static_cast<const char*>(block), size);
}

// Freeing a block writes all of it: every access to an atomic or a cell in
// it must happen-before the free.
inline void detail::freeing(const char* block, std::size_t size) {
  for (auto it = locations.lower_bound(block); it != locations.end() && it->first < block + size; ++it) {
    const Location& loc = it->second;
    for (const StoreRecord& s : loc.stores) {
      if (s.thread != slot() && !seen(s.thread, s.stamp))
        report_race("an atomic in a freed block", "free", s.thread, "store");
    }
    for (int t = 0; t <= kMaxThreads; ++t) {
      if (t != slot() && loc.reads[t] != 0 && !seen(t, loc.reads[t]))
        report_race("an atomic in a freed block", "free", t, "load");
    }
  }
  for (auto it = cells.lower_bound(block); it != cells.end() && it->first < block + size; ++it) {
    const CellRecord& cell = it->second;
    if (cell.writer != slot() && !seen(cell.writer, cell.write_stamp))
      report_race(cell.what, "free", cell.writer, "write");
    for (int t = 0; t <= kMaxThreads; ++t) {
      if (t != slot() && cell.reads[t] != 0 && !seen(t, cell.reads[t])) report_race(cell.what, "free", t, "read");
    }
  }
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

namespace detail {

inline bool acquires(std::memory_order order) noexcept {
  return order == std::memory_order_acquire || order == std::memory_order_consume || order == std::memory_order_acq_rel
         || order == std::memory_order_seq_cst;
}
inline bool releases(std::memory_order order) noexcept {
  return order == std::memory_order_release || order == std::memory_order_acq_rel || order == std::memory_order_seq_cst;
}

// The atomic at `address`, whose newest value is `bits`. An atomic first
// touched in this execution starts with one store that everybody has seen
// (it was initialized before it could be shared, or the execution began
// after). One whose newest store no longer holds its value was built again
// in place since: its history starts over.
inline Location& location(const void* address, std::uint64_t bits) {
  auto [it, fresh] = locations.try_emplace(static_cast<const char*>(address));
  Location& loc = it->second;
  if (fresh || loc.stores.back().bits != bits) {
    loc = Location{};
    loc.stores.push_back(StoreRecord{bits, kOutside, 0});
  }
  return loc;
}

// The calling thread reads `loc` with `order`: which store it reads.
inline const StoreRecord& read(Location& loc, std::memory_order order, bool newest_only) {
  const int me = slot();
  std::uint64_t oldest = std::max(loc.first, loc.floor[me]);
  if (order == std::memory_order_seq_cst) oldest = std::max(oldest, loc.last_seq_cst);
  for (std::uint64_t i = loc.last(); i > oldest; --i) {  // a store that happens-before this load hides older ones
    const StoreRecord& s = loc.at(i);
    if (seen(s.thread, s.stamp)) {
      oldest = i;
      break;
    }
  }
  std::size_t older = 0;
  if (!newest_only && active != nullptr) older = active->choose_read(loc.last() - oldest + 1);
  const std::uint64_t index = loc.last() - older;
  if (older > 0) view().read_stale = true;
  const StoreRecord& store = loc.at(index);
  loc.floor[me] = index;
  loc.reads[me] = tick();
  if (store.has_release) join(acquires(order) ? view().now : view().pending, store.release);
  return store;
}

// The calling thread writes `bits` into `loc` with `order`, after reading
// `read_from` if it is a read-modify-write (whose release sequence it
// continues).
inline void write(Location& loc, std::uint64_t bits, std::memory_order order, const StoreRecord* read_from) {
  const int me = slot();
  StoreRecord store{bits, me, tick()};
  if (releases(order)) {
    store.release = view().now;
    store.has_release = true;
  } else if (view().has_fence) {
    store.release = view().fenced;
    store.has_release = true;
  }
  if (read_from != nullptr && read_from->has_release) {
    join(store.release, read_from->release);
    store.has_release = true;
  }
  loc.stores.push_back(store);
  if (loc.stores.size() > kHistory) {
    loc.stores.erase(loc.stores.begin());
    ++loc.first;
  }
  loc.floor[me] = loc.last();
  if (order == std::memory_order_seq_cst) loc.last_seq_cst = loc.last();
}

template <class T>
std::uint64_t to_bits(const T& value) noexcept {
  static_assert(sizeof(T) <= sizeof(std::uint64_t) && std::is_trivially_copyable_v<T>,
                "model::Atomic holds values of at most 8 bytes");
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}
template <class T>
T from_bits(std::uint64_t bits) noexcept {
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}

inline void report_race(const char* what, const char* access, int other, const char* other_access) {
  check(false, (std::string("a data race on ") + what + ": " + thread_name(slot()) + "'s " + access + " and "
                + thread_name(other) + "'s " + other_access + " are not ordered by happens-before")
                   .c_str());
}

}  // namespace detail

/// An atomic thread fence, as std::atomic_thread_fence: a release fence
/// makes this thread's later relaxed stores carry what it has seen; an
/// acquire fence makes it see what its earlier relaxed loads read.
inline void fence(std::memory_order order) {
  detail::CheckerScope scope;
  yield();
  detail::ThreadView& v = detail::view();
  detail::tick();
  if (detail::acquires(order)) detail::join(v.now, v.pending);
  if (order == std::memory_order_seq_cst) {
    detail::join(v.now, detail::sc_fences);
    detail::sc_fences = v.now;
  }
  if (detail::releases(order)) {
    v.fenced = v.now;
    v.has_fence = true;
  }
}

/// std::atomic's interface; each operation is a scheduling point, checked
/// against freed memory, and then runs as one step under the memory model.
/// The newest value lives in the object itself, so a model Atomic has the
/// size of the value, as std::atomic does (layouts stay the same); its
/// history lives in the checker.
template <class T>
class Atomic {
 public:
  Atomic() noexcept : value_() { forget(); }
  constexpr Atomic(T v) noexcept : value_(v) {  // NOLINT: as std::atomic's
    if (!std::is_constant_evaluated()) forget();
  }
  Atomic(const Atomic&) = delete;
  Atomic& operator=(const Atomic&) = delete;

  T load(std::memory_order order = std::memory_order_seq_cst) const noexcept {
    point();
    detail::CheckerScope scope;
    return detail::from_bits<T>(detail::read(here(), order, false).bits);
  }
  void store(T v, std::memory_order order = std::memory_order_seq_cst) noexcept {
    point();
    detail::CheckerScope scope;
    detail::write(here(), detail::to_bits(v), order, nullptr);
    ++detail::writes;
    value_ = v;
  }
  T exchange(T v, std::memory_order order = std::memory_order_seq_cst) noexcept {
    return modify(order, [v](T) { return v; });
  }
  T fetch_add(T d, std::memory_order order = std::memory_order_seq_cst) noexcept {
    return modify(order, [d](T old) { return static_cast<T>(old + d); });
  }
  T fetch_sub(T d, std::memory_order order = std::memory_order_seq_cst) noexcept {
    return modify(order, [d](T old) { return static_cast<T>(old - d); });
  }
  T fetch_or(T d, std::memory_order order = std::memory_order_seq_cst) noexcept {
    return modify(order, [d](T old) { return static_cast<T>(old | d); });
  }
  T fetch_and(T d, std::memory_order order = std::memory_order_seq_cst) noexcept {
    return modify(order, [d](T old) { return static_cast<T>(old & d); });
  }
  T fetch_xor(T d, std::memory_order order = std::memory_order_seq_cst) noexcept {
    return modify(order, [d](T old) { return static_cast<T>(old ^ d); });
  }
  // Never fails spuriously: a spurious failure only repeats a loop's
  // iteration. A failure reads the newest value, as the hardware's
  // compare-exchange does.
  bool compare_exchange_weak(T& expected, T desired, std::memory_order success, std::memory_order failure) noexcept {
    point();
    if (value_ == expected) {
      (void)modify_here(success, [desired](T) { return desired; });
      return true;
    }
    detail::CheckerScope scope;
    expected = detail::from_bits<T>(detail::read(here(), failure, true).bits);
    return false;
  }
  bool compare_exchange_weak(T& expected, T desired, std::memory_order order = std::memory_order_seq_cst) noexcept {
    return compare_exchange_weak(expected, desired, order, failure_order(order));
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order success, std::memory_order failure) noexcept {
    return compare_exchange_weak(expected, desired, success, failure);
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order order = std::memory_order_seq_cst) noexcept {
    return compare_exchange_weak(expected, desired, order, failure_order(order));
  }

  /// Blocks while the value is `old`, until a notify that comes after the
  /// change (no spurious return: a caller's loop is explored either way).
  /// A change nobody notifies leaves the waiter blocked: a deadlock. It
  /// compares the newest value, as the kernel's futex does, and reads it
  /// with `order`.
  void wait(T old, std::memory_order order = std::memory_order_seq_cst) const noexcept {
    for (;;) {
      point();
      if (value_ != old) {
        detail::CheckerScope scope;
        (void)detail::read(here(), order, true);
        return;
      }
      std::uint64_t seen = detail::notifies[this];
      block_until([this, seen] { return detail::notifies[this] != seen; });
    }
  }
  void notify_one() noexcept { notify(); }
  void notify_all() noexcept { notify(); }

 private:
  static constexpr std::memory_order failure_order(std::memory_order order) noexcept {
    if (order == std::memory_order_acq_rel) return std::memory_order_acquire;
    if (order == std::memory_order_release) return std::memory_order_relaxed;
    return order;
  }
  void point() const noexcept {
    yield();
    check(!is_freed(this), "an atomic operation on freed memory (use after free)");
  }
  // A new object at this address (a block reused): no history.
  void forget() noexcept {
    detail::CheckerScope scope;
    detail::locations.erase(reinterpret_cast<const char*>(this));
  }
  detail::Location& here() const { return detail::location(this, detail::to_bits(value_)); }
  template <class F>
  T modify(std::memory_order order, F next) noexcept {
    point();
    return modify_here(order, next);
  }
  template <class F>
  T modify_here(std::memory_order order, F next) noexcept {
    detail::CheckerScope scope;
    detail::Location& loc = here();
    const detail::StoreRecord& read_from = detail::read(loc, order, true);
    detail::StoreRecord copy = read_from;  // write() may drop it from the history
    T old = value_;
    T now = next(old);
    detail::write(loc, detail::to_bits(now), order, &copy);
    ++detail::writes;
    value_ = now;
    return old;
  }
  void notify() noexcept {
    point();
    ++detail::notifies[this];  // every waiter re-checks; one whose value is unchanged waits again
  }

  T value_;
};

/// Records a read of the non-atomic memory at `address` (`what` names it
/// in a report): it races with the last write unless that write
/// happens-before it.
inline void cell_read(const void* address, const char* what = "a non-atomic cell") {
  detail::CheckerScope scope;
  detail::CellRecord& cell = detail::cells[static_cast<const char*>(address)];
  cell.what = what;
  const int me = detail::slot();
  if (cell.writer != me && !detail::seen(cell.writer, cell.write_stamp))
    detail::report_race(cell.what, "read", cell.writer, "write");
  cell.reads[me] = detail::tick();
}

/// Records a write of the non-atomic memory at `address`: it races with
/// the last write and with every read since, unless they happen-before it.
inline void cell_write(const void* address, const char* what = "a non-atomic cell") {
  detail::CheckerScope scope;
  detail::CellRecord& cell = detail::cells[static_cast<const char*>(address)];
  cell.what = what;
  const int me = detail::slot();
  if (cell.writer != me && !detail::seen(cell.writer, cell.write_stamp))
    detail::report_race(cell.what, "write", cell.writer, "write");
  for (int t = 0; t <= detail::kMaxThreads; ++t) {
    if (t != me && cell.reads[t] != 0 && !detail::seen(t, cell.reads[t]))
      detail::report_race(cell.what, "write", t, "read");
  }
  cell.writer = me;
  cell.write_stamp = detail::tick();
  cell.reads = {};
}

/// A non-atomic value that a protocol publishes through atomics (loom's
/// UnsafeCell): each access is checked against the last write and the
/// reads since, and one not ordered with a conflicting access by
/// happens-before is a data race. It is not a scheduling point: a race is
/// found from the clocks, whatever the interleaving.
template <class T>
class Cell {
 public:
  template <class... Args>
  explicit Cell(Args&&... args) : value_(std::forward<Args>(args)...) {
    {
      detail::CheckerScope scope;
      detail::cells.erase(reinterpret_cast<const char*>(this));  // a new object here: no history
    }
    cell_write(this);
  }
  ~Cell() { cell_write(this); }  // destroying the value writes it
  Cell(const Cell&) = delete;
  Cell& operator=(const Cell&) = delete;

  /// The value, for reading: a read access.
  const T& read() const {
    cell_read(this);
    return value_;
  }
  /// The value, for writing: a write access.
  T& write() {
    cell_write(this);
    return value_;
  }

 private:
  T value_;
};

/// An ordering that a scenario's own plain data stands for: the test's
/// stand-in for a hand-off the real system synchronizes (an executor's run
/// queue between a wake and the next poll, the lock of an event source
/// between a poll that stores its waker and the thread that wakes it).
/// release() publishes what the calling thread has seen; acquire() makes
/// the calling thread see what the releases before it published. Neither is
/// a scheduling point. An Edge that outlives an execution keeps clocks of
/// that execution, which can only hide a race, never report a false one:
/// build it with the scenario's state.
class Edge {
 public:
  void release() noexcept {
    detail::tick();
    detail::join(clock_, detail::view().now);
  }
  void acquire() noexcept {
    detail::tick();
    detail::join(detail::view().now, clock_);
  }

 private:
  detail::Clock clock_{};
};

/// A futex on an Atomic<std::int32_t>: futex_wait sleeps while the word
/// is `expected`, until a futex_wake_one after it began (which wakes every
/// waiter in the model: a real futex may wake any one, and they re-check).
inline void futex_wait(Atomic<std::int32_t>& word, std::int32_t expected) noexcept {
  word.wait(expected, std::memory_order_relaxed);  // a futex orders nothing: the caller's next load does
}
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
    acquired();
  }
  bool try_lock() noexcept {
    yield();
    if (owner_ != kFree) return false;
    owner_ = detail::self;
    ++detail::writes;
    acquired();
    return true;
  }
  void unlock() noexcept {
    check(!is_freed(this), "an unlock of a mutex in freed memory (use after free)");
    check(owner_ == detail::self, "a mutex unlocked by a thread that does not hold it");
    {
      detail::CheckerScope scope;
      detail::tick();
      detail::lock_clocks[this] = detail::view().now;  // an unlock releases what its thread has seen
    }
    owner_ = kFree;
    ++detail::writes;
    yield();
  }

 private:
  // A lock acquires what the last unlock released.
  void acquired() {
    detail::CheckerScope scope;
    detail::tick();
    auto it = detail::lock_clocks.find(this);
    if (it != detail::lock_clocks.end()) detail::join(detail::view().now, it->second);
  }

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
