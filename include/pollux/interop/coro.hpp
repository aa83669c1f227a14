// Coro<T>: a C++20 coroutine that is a pollux future, so it can be spawned,
// joined, selected, timed out and cancelled by destruction like any other.
// Inside it, `co_await f` awaits any pollux future f: the future is moved
// into the coroutine's frame (so it never moves after its first poll, rule
// 4) and polled with the Context of the Coro's own poll, so the waker it
// stores is the task's (rule 2), and nothing is allocated per await.
// Frames come from pollux's slab where they fit. pollux's own futures stay
// free of coroutines (interop/coroutine.hpp says where coroutines are).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <coroutine>
#include <cstddef>
#include <exception>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/slab.hpp"

namespace pollux {

template <class T>
class Coro;

namespace detail {

template <Future F>
class CoroAwaiter;

// What every Coro's promise has, whatever its T: the poll in progress, and
// the awaited future the coroutine is suspended on.
class CoroPromiseBase {
 public:
  // The coroutine starts at its first poll, as every future does.
  std::suspend_always initial_suspend() noexcept { return {}; }
  // It stays suspended at its end, so Coro::poll can take the result.
  std::suspend_always final_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { error_ = std::current_exception(); }

  // The frame, from the slab where it fits (one block per coroutine).
  static void* operator new(std::size_t size) { return allocate_bytes(size, alignof(std::max_align_t)); }
  static void operator delete(void* frame, std::size_t size) noexcept {
    deallocate_bytes(frame, size, alignof(std::max_align_t));
  }

  // The Context of the Coro::poll that resumed the coroutine.
  Context& context() noexcept { return *cx_; }
  // The coroutine suspends on `awaiter`, whose future returned Pending:
  // the next Coro::poll polls it with `poll` before resuming.
  void suspend_on(void* awaiter, bool (*poll)(void*, Context&)) noexcept {
    awaiter_ = awaiter;
    poll_awaiter_ = poll;
  }

  // Only pollux futures are awaited: the coroutine is resumed by polls.
  template <class F>
  auto await_transform(F&& future) {
    static_assert(Future<std::decay_t<F>>,
                  "pollux::Coro: co_await takes a pollux future (using Output = ...; Poll<Output> poll(Context&))");
    return CoroAwaiter<std::decay_t<F>>(std::forward<F>(future), *this);
  }

 protected:
  template <class>
  friend class pollux::Coro;

  Context* cx_ = nullptr;
  void* awaiter_ = nullptr;
  bool (*poll_awaiter_)(void*, Context&) = nullptr;  // true once the awaited future is Ready
  std::exception_ptr error_;
};

// `co_await f` inside a Coro: f lives here, in the frame, until its output
// is taken.
template <Future F>
class CoroAwaiter {
 public:
  using Output = output_t<F>;

  CoroAwaiter(F future, CoroPromiseBase& promise) : future_(std::move(future)), promise_(&promise) {}

  // Polls f at once: a Ready future does not suspend the coroutine.
  bool await_ready() { return poll(promise_->context()); }
  // Pending: Coro::poll polls f again each time the task is woken.
  void await_suspend(std::coroutine_handle<>) noexcept { promise_->suspend_on(this, &poll_erased); }
  Output await_resume() {
    if constexpr (std::is_void_v<Output>) {
      return;
    } else {
      return std::move(*output_);
    }
  }

 private:
  bool poll(Context& cx) {
    Poll<Output> done = future_.poll(cx);
    if (done.is_pending()) return false;
    if constexpr (!std::is_void_v<Output>) output_.emplace(std::move(done).value());
    return true;
  }
  static bool poll_erased(void* self, Context& cx) { return static_cast<CoroAwaiter*>(self)->poll(cx); }

  F future_;
  CoroPromiseBase* promise_;
  std::conditional_t<std::is_void_v<Output>, bool, std::optional<Output>> output_{};
};

template <class T>
class CoroPromise : public CoroPromiseBase {
 public:
  Coro<T> get_return_object() noexcept;
  template <class U>
  requires std::is_constructible_v<T, U&&>
  void return_value(U&& value) { value_.emplace(std::forward<U>(value)); }

  std::optional<T> value_;
};

template <>
class CoroPromise<void> : public CoroPromiseBase {
 public:
  Coro<void> get_return_object() noexcept;
  void return_void() noexcept {}
};

}  // namespace detail

/// A coroutine that is a future of T: it starts at its first poll, runs
/// until it awaits a future that is Pending, and is Ready with what it
/// co_returns (its exception rethrown). Destroying it destroys its frame
/// and the future it awaits: cancellation is destruction.
template <class T>
class [[nodiscard("futures do nothing unless polled")]] Coro {
 public:
  static_assert(!std::is_reference_v<T>, "pollux::Coro<T>: T is a value (return a pointer or std::reference_wrapper)");
  /// The promise of a function returning Coro<T> (the compiler looks for this name).
  using promise_type = detail::CoroPromise<T>;
  /// What the coroutine co_returns.
  using Output = T;

  /// Takes over `other`'s coroutine; `other` is left empty.
  Coro(Coro && other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Coro& operator=(Coro&&) = delete;
  ~Coro() {
    if (handle_) handle_.destroy();
  }

  /// Resumes the coroutine if what it awaits is Ready: Ready once it
  /// returned (or threw), else Pending with the awaited future holding
  /// the waker of `cx`.
  Poll<T> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Coro, !handle_.done());
    promise_type& promise = handle_.promise();
    promise.cx_ = &cx;
    if (promise.poll_awaiter_ != nullptr) {
      if (!promise.poll_awaiter_(promise.awaiter_, cx)) return pending;
      promise.poll_awaiter_ = nullptr;
    }
    handle_.resume();  // up to the next Pending co_await, or the end
    if (!handle_.done()) return pending;
    if (promise.error_) std::rethrow_exception(promise.error_);
    if constexpr (std::is_void_v<T>) {
      return ready();
    } else {
      return Poll<T>(std::in_place, std::move(*promise.value_));
    }
  }

 private:
  friend promise_type;
  explicit Coro(std::coroutine_handle<promise_type> handle) noexcept : handle_(handle) {}
  std::coroutine_handle<promise_type> handle_;
};

namespace detail {
template <class T>
Coro<T> CoroPromise<T>::get_return_object() noexcept {
  return Coro<T>(std::coroutine_handle<CoroPromise<T>>::from_promise(*this));
}
inline Coro<void> CoroPromise<void>::get_return_object() noexcept {
  return Coro<void>(std::coroutine_handle<CoroPromise<void>>::from_promise(*this));
}
}  // namespace detail

}  // namespace pollux
