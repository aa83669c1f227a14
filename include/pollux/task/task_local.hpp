// TaskLocal<T>: a value that belongs to a future and everything it polls,
// whatever thread polls it (tokio's task_local!). `key.scope(v, f)` is a
// future that owns v and makes it current for the duration of each poll of
// f; inside, key.get() and key.with(fn) reach it. A value is current only
// while the scope's poll runs, so a thread pool that moves the task between
// threads carries it along, and two tasks on one thread never see each
// other's. Scopes nest: the innermost scope of a key wins.
// The current values of a thread form a list through the stack frames of
// the scope polls running on it: setting one costs two stores, nothing is
// allocated, and get() walks the (usually one or two) scopes in force.
// Rule 7: an exception from f leaves the list as it found it.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <functional>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/task/detail/task_context.hpp"
#include "pollux/core/future.hpp"

namespace pollux {

namespace detail {
/// One scope in force on this thread: which key, and its value.
struct TaskLocalFrame {
  const void* key;
  void* value;
  TaskLocalFrame* outer;
};

/// Puts a frame in force for its own lifetime.
class TaskLocalEnter {
 public:
  TaskLocalEnter(const void* key, void* value) noexcept : frame_{key, value, task_context().task_locals} {
    task_context().task_locals = &frame_;
  }
  ~TaskLocalEnter() { task_context().task_locals = frame_.outer; }
  TaskLocalEnter(const TaskLocalEnter&) = delete;
  TaskLocalEnter& operator=(const TaskLocalEnter&) = delete;

 private:
  TaskLocalFrame frame_;
};
}  // namespace detail

template <class T>
class TaskLocal;

/// The future key.scope(value, f) returns.
template <class T, Future F>
class [[nodiscard("futures do nothing unless polled")]] TaskLocalFuture {
 public:
  using Output = output_t<F>;

  /// What key.scope(value, future) makes.
  TaskLocalFuture(const TaskLocal<T>* key, T value, F future)
      : key_(key), value_(std::move(value)), future_(std::in_place, std::move(future)) {}

  /// Polls the inner future with the value current for the key.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(TaskLocalFuture, future_.has_value());
    detail::TaskLocalEnter enter(key_, &value_);
    Poll<Output> out = future_->poll(cx);
    // f is destroyed inside the scope too: its destructor may read the value.
    if (out.is_ready()) future_.reset();
    return out;
  }

  ~TaskLocalFuture() {
    if (future_) {
      detail::TaskLocalEnter enter(key_, &value_);
      future_.reset();
    }
  }
  /// Movable until its first poll (rule 4).
  TaskLocalFuture(TaskLocalFuture &&) = default;
  TaskLocalFuture& operator=(TaskLocalFuture&&) = delete;

 private:
  const TaskLocal<T>* key_;
  T value_;
  std::optional<F> future_;  // empty once Ready
};

/// A key for a task-local value of type T; declare it once, as a global or
/// a static: `inline const pollux::TaskLocal<std::string> request_id;`.
template <class T>
class TaskLocal {
 public:
  constexpr TaskLocal() noexcept = default;
  TaskLocal(const TaskLocal&) = delete;
  TaskLocal& operator=(const TaskLocal&) = delete;

  /// A future that runs `future` with `value` current for this key.
  template <Future F>
  TaskLocalFuture<T, F> scope(T value, F future) const {
    return TaskLocalFuture<T, F>(this, std::move(value), std::move(future));
  }

  /// Calls fn() with `value` current for this key, outside any future.
  template <class Fn>
  decltype(auto) sync_scope(T value, Fn&& fn) const {
    detail::TaskLocalEnter enter(this, &value);
    return std::invoke(std::forward<Fn>(fn));
  }

  /// fn(value) with the current value; throws std::logic_error when no
  /// scope of this key is in force.
  template <class Fn>
  decltype(auto) with(Fn&& fn) const {
    T* value = find();
    if (value == nullptr) throw std::logic_error("pollux::TaskLocal: read outside any scope of this key");
    return std::invoke(std::forward<Fn>(fn), *value);
  }

  /// fn(value) with the current value, or nullopt without calling fn when
  /// no scope of this key is in force.
  template <class Fn>
  auto try_with(Fn&& fn) const -> std::optional<std::invoke_result_t<Fn, T&>> {
    T* value = find();
    if (value == nullptr) return std::nullopt;
    return std::invoke(std::forward<Fn>(fn), *value);
  }

  /// A copy of the current value (throws as with() does).
  T get() const requires std::is_copy_constructible_v<T> {
    return with([](const T& v) { return v; });
  }

  /// Whether a scope of this key is in force here.
  bool is_set() const noexcept { return find() != nullptr; }

 private:
  T* find() const noexcept {
    for (auto* frame = detail::task_context().task_locals; frame != nullptr; frame = frame->outer) {
      if (frame->key == this) return static_cast<T*>(frame->value);
    }
    return nullptr;
  }
};

}  // namespace pollux
