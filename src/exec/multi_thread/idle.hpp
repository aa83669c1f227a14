// Which workers sleep, and which look for work: the protocol that keeps a
// busy pool from waking every sleeper for every task, and an idle one from
// missing a task.
//
//  - A worker with no work of its own becomes a *searcher* (it steals and
//    looks at the inject queue), but at most half the workers search at
//    once: more would only fight over the same queues.
//  - Work made visible from anywhere is followed by notify: it wakes one
//    sleeper, and only when nobody is searching (a searcher will find the
//    work) and somebody sleeps.
//  - A searcher that finds work stops searching; if it was the last one,
//    it wakes one more worker, since there may be more work than it took.
//  - A worker that parks while nobody else searches looks at every queue
//    once more after it announced itself, and wakes a worker if it sees
//    work: the last searcher, and also a worker that was refused the
//    search (half the others searched) and parks after they stopped. Until
//    its announcement a notifier counted it awake and woke nobody, yet it
//    never looked at the other workers' queues. (Only the last searcher
//    looks, in tokio: there a task queued behind a busy worker can wait
//    for that worker while another sleeps.) The push that
//    makes work visible and notify's read of the state are seq_cst, as are
//    the parking worker's change of the state and its last look at the
//    queues: all four fall in one total order, so whichever side comes
//    second sees the other, and a task is never left with everyone asleep.
//    (A plain load here, not a read-modify-write: notify runs on every
//    yield, and two workers writing this word on every yield would pass
//    its cache line back and forth.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "pollux/core/detail/concurrency.hpp"

namespace pollux::detail::multi_thread {

class Idle {
 public:
  explicit Idle(std::size_t workers) : workers_(workers), state_(State::all_unparked(workers)) {
    sleepers_.reserve(workers);
  }

  /// Which sleeping worker to unpark after making work visible, if any.
  /// The chosen one leaves the sleepers as a searcher.
  std::optional<std::size_t> worker_to_notify() {
    if (!should_notify(state_.load(std::memory_order_seq_cst))) return std::nullopt;
    MutexLock lock(mutex_);
    // Looked at again under the lock: a searcher may have started since.
    if (!should_notify(state_.load(std::memory_order_seq_cst)) || sleepers_.empty()) return std::nullopt;
    state_.fetch_add(State::kOneUnparked + State::kOneSearching, std::memory_order_seq_cst);
    std::size_t worker = sleepers_.back();
    sleepers_.pop_back();
    return worker;
  }

  /// A worker with nothing to run asks to search. Refused while half the
  /// workers already search.
  ///
  ///   [ unparked | searching ]  ->  [ unparked | searching + 1 ]
  bool transition_worker_to_searching() {
    std::uint64_t state = state_.load(std::memory_order_seq_cst);
    if (2 * State::searching(state) >= workers_) return false;
    // Counted without the check: at worst a few more than half search.
    state_.fetch_add(State::kOneSearching, std::memory_order_seq_cst);
    return true;
  }

  /// A searcher found work. True when it was the last searcher: it must
  /// then wake another worker (there may be more work).
  ///
  ///   [ unparked | searching ]  ->  [ unparked | searching - 1 ]
  bool transition_worker_from_searching() {
    std::uint64_t before = state_.fetch_sub(State::kOneSearching, std::memory_order_seq_cst);
    return State::searching(before) == 1;
  }

  /// The worker goes to sleep. True when nobody searches after it: it
  /// must then look at every queue once more (see the protocol above).
  ///
  ///   [ unparked | searching ]  ->  [ unparked - 1 | searching - (was searching) ]
  bool transition_worker_to_parked(std::size_t worker, bool searching) {
    MutexLock lock(mutex_);
    std::uint64_t change = State::kOneUnparked + (searching ? State::kOneSearching : 0);
    std::uint64_t before = state_.fetch_sub(change, std::memory_order_seq_cst);
    sleepers_.push_back(worker);
    return State::searching(before) == (searching ? 1 : 0);
  }

  /// A sleeper woke for its own reasons (its driver made work for it, or
  /// shutdown): it leaves the sleepers without searching. False when a
  /// notifier had already taken it off (it is then a searcher).
  ///
  ///   [ unparked | searching ]  ->  [ unparked + 1 | searching ]
  bool unpark_worker_by_id(std::size_t worker) {
    MutexLock lock(mutex_);
    for (std::size_t i = 0; i < sleepers_.size(); ++i) {
      if (sleepers_[i] == worker) {
        sleepers_[i] = sleepers_.back();
        sleepers_.pop_back();
        state_.fetch_add(State::kOneUnparked, std::memory_order_seq_cst);
        return true;
      }
    }
    return false;
  }

  /// True while `worker` is among the sleepers (no notifier chose it).
  bool is_parked(std::size_t worker) {
    MutexLock lock(mutex_);
    for (std::size_t sleeper : sleepers_) {
      if (sleeper == worker) return true;
    }
    return false;
  }

 private:
  // One word, so a notifier reads both counts in one atomic operation:
  //
  //   63                        16 15             0
  //   +---------------------------+----------------+
  //   |     unparked workers      |   searching    |
  //   +---------------------------+----------------+
  struct State {
    static constexpr std::uint64_t kOneSearching = 1;
    static constexpr std::uint64_t kOneUnparked = std::uint64_t{1} << 16;
    static std::uint64_t searching(std::uint64_t s) noexcept { return s & 0xffff; }
    static std::uint64_t unparked(std::uint64_t s) noexcept { return s >> 16; }
    static std::uint64_t all_unparked(std::size_t workers) noexcept { return workers * kOneUnparked; }
  };

  bool should_notify(std::uint64_t state) const noexcept {
    return State::searching(state) == 0 && State::unparked(state) < workers_;
  }

  const std::size_t workers_;
  Atomic<std::uint64_t> state_;
  Mutex mutex_;
  std::vector<std::size_t> sleepers_ POLLUX_GUARDED_BY(mutex_);
};

}  // namespace pollux::detail::multi_thread
