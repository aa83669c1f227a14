// JoinSet<T>: a set of spawned tasks whose outputs are collected as they
// finish, in whatever order that is. join_next() is a future of the next
// output, a JoinHandle's Result<T, Cancelled> (nullopt once the set is
// empty); it rethrows a task's exception, and the set goes on with the
// others. Destroying the set aborts the tasks still in it (rule 5: nothing
// outlives the set that was not asked to).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <optional>
#include <string_view>
#include <utility>

#include "pollux/core/future.hpp"
#include "pollux/exec/scheduler.hpp"
#include "pollux/stream/futures_unordered.hpp"
#include "pollux/task/join_handle.hpp"

namespace pollux {

/// A set of spawned tasks whose outputs are collected as they finish, in whatever order that is.
template <class T>
class JoinSet {
 public:
  /// A task's output, or Cancelled if it was aborted.
  using Item = Result<T, Cancelled>;
  /// Ends while empty and yields again after an insert (a RefillableStream).
  static constexpr bool refillable = true;

  JoinSet() = default;
  /// Takes over `other`'s tasks.
  JoinSet(JoinSet&&) noexcept = default;
  JoinSet& operator=(JoinSet&&) = delete;
  ~JoinSet() { abort_all(); }

  // Spawns on the executor running the calling task (pollux::spawn).
  /// Spawns `future` on the current executor (pollux::spawn) and keeps its handle in the set.
  template <Future F>
  requires std::is_same_v<output_t<F>, T>
  void spawn(F future, std::string_view name = {}) { tasks_.push(pollux::spawn(std::move(future), name)); }

  /// Adds a task spawned elsewhere (on a given executor).
  void insert(JoinHandle<T> handle) { tasks_.push(std::move(handle)); }

  /// The number of tasks whose output was not yet taken.
  std::size_t size() const noexcept { return tasks_.size(); }
  /// True when size() is 0.
  bool empty() const noexcept { return tasks_.empty(); }

  /// Aborts every task still in the set; join_next then yields Cancelled
  /// for those that had not finished.
  void abort_all() noexcept {
    tasks_.for_each([](JoinHandle<T>& handle) { handle.abort(); });
  }

  /// A future of the next task output; borrows the set.
  class [[nodiscard("futures do nothing unless polled")]] JoinNext {
   public:
    using Output = std::optional<Item>;
    /// What join_next() returns, over `set`.
    explicit JoinNext(JoinSet & set) noexcept : set_(&set) {}
    /// The next task's output in completion order (its exception rethrown, Cancelled as the
    /// error of an aborted task), or nullopt once the set is empty.
    Poll<Output> poll(Context & cx) { return set_->tasks_.poll_next(cx); }

   private:
    JoinSet* set_;
  };
  /// A future of the next task output to come (in completion order), or
  /// nullopt once the set is empty. Borrows the set.

  JoinNext join_next() noexcept { return JoinNext(*this); }

  /// JoinSet is also a Stream of the outputs.
  Poll<std::optional<Item>> poll_next(Context& cx) { return tasks_.poll_next(cx); }

 private:
  FuturesUnordered<JoinHandle<T>> tasks_;
};

}  // namespace pollux
