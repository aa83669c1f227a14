// OnceCell<T>: a value set once, by whichever task gets there first, with
// an async initializer (tokio's OnceCell): get_or_init(make) runs make()'s
// future in one task while the others wait for its value. A one-permit
// semaphore decides who initializes: its holder runs the initializer; a
// holder that is destroyed (or whose initializer throws) gives the permit
// back and the next waiter initializes instead; once the value is there
// the semaphore closes, and every waiter and every later call sees it.
// The value is published with one release store of `initialized_` before
// the close, so a reader that sees the flag (acquire) sees the value.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/result.hpp"
#include "pollux/sync/detail/batch_semaphore.hpp"

namespace pollux {

/// Why OnceCell::set refused its value.
enum class SetError {
  AlreadyInitialized,  ///< the cell has its value already
  Initializing,        ///< a get_or_init is running its initializer now
};

/// A value that is set once and then read by anyone, without a lock: its
/// first get_or_init runs the initializer, later ones and concurrent ones
/// get the same value.
template <class T>
class OnceCell {
 public:
  template <class Make>
  class GetOrInit;

  /// An empty cell.
  OnceCell() : semaphore_(1) {}
  /// A cell that has `value` already.
  explicit OnceCell(T value) : semaphore_(0) { publish(std::move(value)); }
  OnceCell(const OnceCell&) = delete;
  OnceCell& operator=(const OnceCell&) = delete;
  ~OnceCell() {
    if (initialized_.load(std::memory_order_acquire)) std::launder(reinterpret_cast<T*>(&storage_))->~T();
  }

  /// The value, or null while the cell is empty (or being initialized).
  T* get() noexcept {
    if (!initialized_.load(std::memory_order_acquire)) return nullptr;
    detail::note_read(&storage_, "a OnceCell's value");  // published by initialized_
    return std::launder(reinterpret_cast<T*>(&storage_));
  }
  /// The value, or null while the cell is empty.
  const T* get() const noexcept { return const_cast<OnceCell*>(this)->get(); }
  /// Whether the value is there.
  bool initialized() const noexcept { return initialized_.load(std::memory_order_acquire); }

  /// Sets the value now, unless the cell has one or a get_or_init is
  /// initializing it: then the error says which, and `value` is dropped.
  Result<void, SetError> set(T value) {
    if (std::optional<TryAcquireError> error = semaphore_.try_acquire(1)) {
      return *error == TryAcquireError::Closed ? SetError::AlreadyInitialized : SetError::Initializing;
    }
    publish(std::move(value));
    return {};
  }

  /// A future of the value: at once if the cell has it; else, if no other
  /// task is initializing it, this one calls make() and awaits the future
  /// it returns (whose Output is T), and stores what it gives; else it
  /// waits for that task's value. Destroyed, or thrown out of, while it
  /// initializes, it lets the next waiter initialize instead.
  template <class Make>
  requires std::is_invocable_v<Make&> GetOrInit<Make> get_or_init(Make make) {
    return GetOrInit<Make>(*this, std::move(make));
  }

 private:
  // Under the permit (or in the constructor): the only writer, once.
  void publish(T value) {
    ::new (static_cast<void*>(&storage_)) T(std::move(value));
    detail::note_write(&storage_, "a OnceCell's value");
    initialized_.store(true, std::memory_order_release);
    semaphore_.close();  // wakes every waiter: they find the value
  }

  alignas(T) unsigned char storage_[sizeof(T)];
  detail::Atomic<bool> initialized_{false};
  detail::BatchSemaphore semaphore_;  // one permit: the right to initialize
};

/// The future of OnceCell::get_or_init: Ready with a reference to the value.
template <class T>
template <class Make>
class [[nodiscard("futures do nothing unless polled")]] OnceCell<T>::GetOrInit {
 public:
  /// The initializer's future: what make() returns.
  using Init = std::invoke_result_t<Make&>;
  using Output = std::reference_wrapper<T>;
  static_assert(std::is_same_v<typename Init::Output, T>,
                "pollux::OnceCell::get_or_init: make() must return a "
                "future whose Output is the cell's T");

  /// What get_or_init() makes.
  GetOrInit(OnceCell & cell, Make make) : cell_(&cell), make_(std::move(make)), acquire_(cell.semaphore_, 1) {}
  GetOrInit(GetOrInit && other) noexcept(std::is_nothrow_move_constructible_v<Make>)
      : cell_(other.cell_),
        make_(std::move(other.make_)),
        acquire_(std::move(other.acquire_)),
        init_(std::move(other.init_)),
        state_(std::exchange(other.state_, State::Done)) {}
  GetOrInit& operator=(GetOrInit&&) = delete;
  ~GetOrInit() {
    // Initializing: the permit goes back, so the next waiter initializes.
    if (state_ == State::Initializing) cell_->semaphore_.release(1);
  }

  /// Ready with the value, once this task or another has set it.
  Poll<Output> poll(Context & cx) {
    switch (state_) {
      case State::Acquiring: {
        if (T* value = cell_->get()) return finish(*value);
        Poll<bool> acquired = acquire_.poll(cx);
        if (acquired.is_pending()) return pending;
        if (!acquired.value()) return finish(*cell_->get());  // closed: the value is there
        state_ = State::Initializing;                         // the permit is ours: so is the initializing
        init_.emplace(make_());
        [[fallthrough]];
      }
      case State::Initializing: {
        Poll<T> made = init_->poll(cx);
        if (made.is_pending()) return pending;
        init_.reset();
        cell_->publish(std::move(made).value());  // closes: the permit is spent
        return finish(*cell_->get());
      }
      case State::Done:
        break;
    }
    detail::polled_after_ready<GetOrInit>();
  }

 private:
  enum class State {
    Acquiring,     // waiting for the value, or for the right to make it
    Initializing,  // holds the permit, runs the initializer
    Done,
  };

  Poll<Output> finish(T & value) {
    state_ = State::Done;
    return ready(std::ref(value));
  }

  OnceCell* cell_;
  Make make_;
  detail::AcquireFuture acquire_;
  std::optional<Init> init_;
  State state_ = State::Acquiring;
};

}  // namespace pollux
