// Test helpers: a waker that counts what is done to it, a hand-driven
// future that counts its polls, and a value that counts its destruction.
#pragma once

#include <sys/resource.h>

#include <pollux/pollux.hpp>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>

namespace test {

// CPU time this process has used, user and system, in milliseconds: what
// a test checks to tell a wait from a spin.
inline double process_cpu_ms() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec * 1e3 + usage.ru_utime.tv_usec / 1e3 + usage.ru_stime.tv_sec * 1e3
         + usage.ru_stime.tv_usec / 1e3;
}

// A RawWakerVTable whose data is a Counts: every clone, drop and wake is
// counted, so a test can check that references balance.
struct Counts {
  std::atomic<int> clones{0};
  std::atomic<int> drops{0};
  std::atomic<int> wakes{0};
  std::atomic<int> wakes_by_ref{0};
  int live() const { return 1 + clones.load() - drops.load(); }  // 1: the original
  int woken() const { return wakes.load() + wakes_by_ref.load(); }
#if defined(POLLUX_MODEL)
  // A wake happens-before the poll it leads to, as an executor's run queue
  // makes it: a model task that was woken acquires it (model_task.hpp).
  model::Edge woke;
#endif
  void woken_now() {
#if defined(POLLUX_MODEL)
    woke.release();
#endif
  }
};

inline constexpr pollux::RawWakerVTable counting_vtable{
    [](const void* d) {
      static_cast<Counts*>(const_cast<void*>(d))->clones++;
      return pollux::RawWaker{d, &counting_vtable};
    },
    [](const void* d) {
      auto* c = static_cast<Counts*>(const_cast<void*>(d));
      c->woken_now();
      c->wakes++;
      c->drops++;
    },
    [](const void* d) {
      auto* c = static_cast<Counts*>(const_cast<void*>(d));
      c->woken_now();
      c->wakes_by_ref++;
    },
    [](const void* d) { static_cast<Counts*>(const_cast<void*>(d))->drops++; },
};

inline pollux::Waker counting_waker(Counts& counts) {
  return pollux::Waker::from_raw(pollux::RawWaker{&counts, &counting_vtable});
}

// A counting waker and a Context over it: what a test polls with when it
// checks who was woken, and that no clone outlives the future. Declare it
// before the futures, streams and controls it polls: they may hold clones
// of its waker until they are destroyed, and a clone dropped after the
// Probe writes to freed stack (AddressSanitizer's stack-use-after-scope).
struct Probe {
  Counts counts;
  pollux::Waker waker = counting_waker(counts);
  pollux::Context cx{waker};
};

// Shared control of a ManualFuture: the test decides when it is ready and
// wakes the waker it stored, like a leaf future's event source would.
struct Control {
  int polls = 0;
  std::optional<int> value;
  pollux::Waker waker;
  bool throw_on_poll = false;

  void complete(int v) {
    value = v;
    std::move(waker).wake();
  }
};

// A leaf future of int that keeps rule 2: it stores the most recent waker.
class ManualFuture {
 public:
  using Output = int;
  explicit ManualFuture(std::shared_ptr<Control> control) : control_(std::move(control)) {}

  pollux::Poll<int> poll(pollux::Context& cx) {
    ++control_->polls;
    if (control_->throw_on_poll) throw std::runtime_error("child failed");
    if (control_->value) return pollux::ready(*control_->value);
    control_->waker = cx.waker();
    return pollux::pending;
  }

 private:
  std::shared_ptr<Control> control_;
};

// Shared control of a ManualStream: the test hands it items and ends it,
// and each wakes the waker the stream stored, as a socket or a channel
// would.
struct StreamControl {
  int polls = 0;
  std::deque<int> items;
  bool ended = false;
  bool throw_on_poll = false;
  pollux::Waker waker;

  void push(int v) {
    items.push_back(v);
    std::move(waker).wake();
  }
  void end() {
    ended = true;
    std::move(waker).wake();
  }
};

// A leaf stream of int that keeps rule 2 and rule 5: it stores the most
// recent waker, and its destructor drops it (its registration).
class ManualStream {
 public:
  using Item = int;
  explicit ManualStream(std::shared_ptr<StreamControl> control) : control_(std::move(control)) {}
  ManualStream(ManualStream&&) noexcept = default;
  ManualStream& operator=(ManualStream&&) = delete;
  ~ManualStream() {
    if (control_) control_->waker = pollux::Waker();
  }

  pollux::Poll<std::optional<int>> poll_next(pollux::Context& cx) {
    ++control_->polls;
    if (control_->throw_on_poll) throw std::runtime_error("source failed");
    if (!control_->items.empty()) {
      int v = control_->items.front();
      control_->items.pop_front();
      return pollux::ready(v);
    }
    if (control_->ended) return pollux::stream_end;
    control_->waker = cx.waker();
    return pollux::pending;
  }

 private:
  std::shared_ptr<StreamControl> control_;
};

// Always ready with its value, counting its polls: for fairness tests.
struct AlwaysReady {
  using Output = int;
  int value;
  int* polls;
  pollux::Poll<int> poll(pollux::Context&) {
    ++*polls;
    return pollux::ready(value);
  }
};

// Counts its own destruction (moved-from objects do not count) into an int,
// or into an atomic when it may be destroyed on another thread.
template <class Count>
class BasicDropCounter {
 public:
  explicit BasicDropCounter(Count* drops) : drops_(drops) {}
  BasicDropCounter(BasicDropCounter&& other) noexcept : drops_(std::exchange(other.drops_, nullptr)) {}
  BasicDropCounter& operator=(BasicDropCounter&&) = delete;
  ~BasicDropCounter() {
    if (drops_) ++*drops_;
  }

 private:
  Count* drops_;
};
using DropCounter = BasicDropCounter<int>;

// A future that is never ready (as pending_future, which keeps no waker on
// purpose) and counts its destruction.
template <class Count>
class BasicPendingWithDrop {
 public:
  using Output = int;
  explicit BasicPendingWithDrop(Count* drops) : counter_(drops) {}
  pollux::Poll<int> poll(pollux::Context& cx) { return forever_.poll(cx); }

 private:
  BasicDropCounter<Count> counter_;
  pollux::PendingFuture<int> forever_;
};
using PendingWithDrop = BasicPendingWithDrop<int>;
using PendingWithAtomicDrop = BasicPendingWithDrop<std::atomic<int>>;  // destroyed on another thread

// A waker slot that a task writes on each poll and other threads wake,
// as a leaf future's event source would (the wake-storm tests).
class SharedWakerSlot {
 public:
  void store(const pollux::Waker& waker) {
    std::lock_guard lock(mutex_);
    waker_ = waker;
  }
  // Wakes a clone taken under the lock, so the wake runs outside it.
  void wake() {
    pollux::Waker waker;
    {
      std::lock_guard lock(mutex_);
      waker = waker_;
    }
    std::move(waker).wake();
  }

 private:
  std::mutex mutex_;
  pollux::Waker waker_;
};

// A driver with its clock paused, installed on this thread: timer tests
// move time with driver.advance(d) and take none.
struct PausedDriver {
  pollux::Driver driver;
  pollux::Driver::Guard guard = driver.enter();
  PausedDriver() { driver.pause(); }
};

// Polls once with the no-op waker.
template <class F>
auto poll_once(F& future) {
  pollux::Context cx(pollux::noop_waker());
  return future.poll(cx);
}

// True when a JoinHandle's poll answered Cancelled.
template <class T>
bool is_cancelled(const pollux::Poll<pollux::Result<T, pollux::Cancelled>>& polled) {
  return polled.is_ready() && !polled.value().has_value();
}

}  // namespace test
