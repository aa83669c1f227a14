// JoinMap<K, V>: spawned tasks kept under keys, their outputs collected as
// they finish with the key they were spawned under (tokio-util's JoinMap).
// Spawning under a key in use aborts the task that had it, whose output is
// then never reported; abort(key) aborts one task, whose Cancelled comes
// back with its key. Each task's handle sits in a waiter of a
// FuturesUnordered (a wake is O(1), rule 4), and the map from keys points
// at it, so abort, contains and spawn cost one hash lookup. A replaced
// task's waiter is marked, and when its aborted task ends it is dropped
// unreported. Destroying the map aborts the tasks still in it (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pollux/core/future.hpp"
#include "pollux/exec/scheduler.hpp"
#include "pollux/stream/futures_unordered.hpp"
#include "pollux/task/join_handle.hpp"

namespace pollux {

/// Spawned tasks under keys; join_next gives each finished task's key and output.
template <class K, class V, class Hash = std::hash<K>, class Eq = std::equal_to<K>>
class JoinMap {
 public:
  /// A finished task's key, and its output or Cancelled if it was aborted.
  using Item = std::pair<K, Result<V, Cancelled>>;

  JoinMap() : tasks_(std::make_unique<Tasks>()) {}
  /// Takes over `other`'s tasks.
  JoinMap(JoinMap&&) noexcept = default;
  JoinMap& operator=(JoinMap&&) = delete;
  ~JoinMap() {
    if (tasks_) abort_all();
  }

  /// Spawns `future` on the current executor (pollux::spawn) under `key`;
  /// a task already under `key` is aborted, and its output is not reported.
  template <Future F>
  requires std::is_same_v<output_t<F>, V>
  void spawn(K key, F future, std::string_view name = {}) {
    insert(std::move(key), pollux::spawn(std::move(future), name));
  }

  /// Adds a task spawned elsewhere under `key`, as spawn does.
  void insert(K key, JoinHandle<V> handle) {
    auto entry = std::make_unique<Entry>(Entry{std::move(handle), false});
    auto [at, fresh] = tasks_->try_emplace(key, entry.get());
    if (!fresh) {
      at->second->handle.abort();
      at->second->replaced = true;  // its waiter drops the output when the abort ends the task
      at->second = entry.get();
    }
    waiters_.push(Waiter{tasks_.get(), std::move(key), std::move(entry)});
  }

  /// Aborts the task under `key`, if there is one: join_next gives its key
  /// with Cancelled (or its output, if it had finished). True if there was.
  bool abort(const K& key) noexcept {
    auto at = tasks_->find(key);
    if (at == tasks_->end()) return false;
    at->second->handle.abort();
    return true;
  }
  /// Aborts every task still in the map.
  void abort_all() noexcept {
    for (auto& [key, entry] : *tasks_) entry->handle.abort();
  }

  /// Whether a task is under `key` (finished ones stay until join_next takes them).
  bool contains_key(const K& key) const { return tasks_->find(key) != tasks_->end(); }
  /// The keys of the tasks in the map, in no order.
  std::vector<K> keys() const {
    std::vector<K> out;
    out.reserve(tasks_->size());
    for (auto& [key, entry] : *tasks_) out.push_back(key);
    return out;
  }
  /// The number of tasks whose output was not yet taken.
  std::size_t size() const noexcept { return tasks_->size(); }
  /// True when size() is 0.
  bool empty() const noexcept { return tasks_->empty(); }

  /// The next task's key and output, in completion order; nullopt once the
  /// map is empty. A task's exception is rethrown (its key leaves the map
  /// first, so the map stays usable).
  Poll<std::optional<Item>> poll_next(Context& cx) {
    for (;;) {
      // Only replaced tasks' waiters may be left: nothing more to report.
      if (tasks_->empty()) return Poll<std::optional<Item>>(std::in_place, std::nullopt);
      Poll<std::optional<std::optional<Item>>> next = waiters_.poll_next(cx);
      if (next.is_pending()) return pending;
      if (!next.value()) return Poll<std::optional<Item>>(std::in_place, std::nullopt);
      if (*next.value()) return Poll<std::optional<Item>>(std::in_place, std::move(*next.value()));
      // The waiter of a task that was replaced under its key: nothing to report.
    }
  }

  /// The future of join_next(); borrows the map.
  class [[nodiscard("futures do nothing unless polled")]] JoinNext {
   public:
    using Output = std::optional<Item>;
    /// What join_next() returns, over `map`.
    explicit JoinNext(JoinMap & map) noexcept : map_(&map) {}
    /// The next finished task's key and output, or nullopt once the map is empty.
    Poll<Output> poll(Context & cx) { return map_->poll_next(cx); }

   private:
    JoinMap* map_;
  };
  /// A future of the next finished task's key and output (nullopt once the
  /// map is empty). Borrows the map.
  JoinNext join_next() noexcept { return JoinNext(*this); }

 private:
  struct Entry {
    JoinHandle<V> handle;
    bool replaced;  // another task took its key: its output is not reported
  };
  using Tasks = std::unordered_map<K, Entry*, Hash, Eq>;

  // One per task, in waiters_: owns the task's entry (on the heap, so the
  // map's pointer stays good while the waiter moves into the set).
  struct Waiter {
    using Output = std::optional<Item>;
    Tasks* tasks;
    K key;
    std::unique_ptr<Entry> entry;

    Poll<Output> poll(Context& cx) {
      Poll<Result<V, Cancelled>> done = [&] {
        try {
          return entry->handle.poll(cx);
        } catch (...) {
          if (!entry->replaced) tasks->erase(key);
          throw;
        }
      }();
      if (done.is_pending()) return pending;
      if (entry->replaced) return ready(Output());
      tasks->erase(key);
      return ready(Output(std::in_place, std::move(key), std::move(done).value()));
    }
  };

  // On the heap: the waiters point at it, and the map may move.
  std::unique_ptr<Tasks> tasks_;
  FuturesUnordered<Waiter> waiters_;
};

}  // namespace pollux
