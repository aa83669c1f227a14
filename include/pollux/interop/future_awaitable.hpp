// pollux::awaitable(f): a pollux future awaited inside any C++20 coroutine
// (Asio's awaitable, a user's own task type), for coroutines that are not
// pollux::Coro. The future is polled at the co_await; Pending suspends the
// coroutine, and the future's Waker then polls it on the waking thread and
// resumes the coroutine once it is Ready, through a resume function you
// choose. Wakes may come from any thread at any time (rule 6), so wakers
// point at a small reference-counted block (detail/await_bridge.hpp),
// made from pollux's slab only when the future first keeps a waker.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <coroutine>
#include <exception>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/slab.hpp"
#include "pollux/core/waker.hpp"
#include "pollux/interop/detail/await_bridge.hpp"

namespace pollux {

/// Resumes the coroutine on the thread that wakes it: the default of
/// awaitable(). The coroutine then runs inside whatever woke the future (a
/// runtime's timer or I/O turn, another task's send); give awaitable() a
/// resume function that posts to the coroutine's own executor when that
/// matters.
struct ResumeInline {
  /// Resumes `coroutine` here.
  void operator()(std::coroutine_handle<> coroutine) const { coroutine.resume(); }
};

namespace detail {

// The block behind an awaited future's wakers: the bridge's word, and how
// to poll the future and resume the coroutine while the awaiter lives.
struct AwaitBlock {
  AwaitBridge bridge;
  void* owner;                  // the FutureAwaitable; touched only while holding kPolling
  bool (*poll)(void* owner);    // true once the future is done
  void (*resume)(void* owner);  // resumes the coroutine; touches the owner only before it resumes
};

// The waker-side turn: poll until Pending or done, and resume on done.
inline void await_block_wake(AwaitBlock& block) noexcept {
  if (!block.bridge.wake()) return;
  for (;;) {
    bool done = block.poll(block.owner);
    switch (done ? block.bridge.ready() : block.bridge.pending()) {
      case AwaitBridge::Next::PollAgain:
        continue;
      case AwaitBridge::Next::Resume:
        block.resume(block.owner);
        return;
      case AwaitBridge::Next::Suspend:
      case AwaitBridge::Next::Stop:
        return;
    }
  }
}

inline void await_block_release(AwaitBlock* block) noexcept {
  if (!block->bridge.release()) return;
  block->~AwaitBlock();
  slab_deallocate(block, sizeof(AwaitBlock));
}

inline constexpr RawWakerVTable await_block_vtable{
    [](const void* data) {
      static_cast<AwaitBlock*>(const_cast<void*>(data))->bridge.retain();
      return RawWaker{data, &await_block_vtable};
    },
    [](const void* data) {
      auto* block = static_cast<AwaitBlock*>(const_cast<void*>(data));
      await_block_wake(*block);
      await_block_release(block);
    },
    [](const void* data) { await_block_wake(*static_cast<AwaitBlock*>(const_cast<void*>(data))); },
    [](const void* data) { await_block_release(static_cast<AwaitBlock*>(const_cast<void*>(data))); },
};

}  // namespace detail

/// A pollux future F awaited in a coroutine: `co_await awaitable(f)`.
/// Made by awaitable(); await it once.
///
/// Destroyed with the coroutine's frame while suspended, it destroys the
/// future; if a waker is polling the future on another thread at that
/// moment, the destructor waits for that one poll to end, and the
/// coroutine is not resumed.
template <Future F, class Resume = ResumeInline>
class FutureAwaitable {
 public:
  using Output = output_t<F>;

  /// Awaits `future`, resuming through `resume` (a copyable callable
  /// taking std::coroutine_handle<>, called on the waking thread).
  explicit FutureAwaitable(F future, Resume resume = Resume{})
      : future_(std::move(future)), resume_(std::move(resume)) {}
  /// Moves one not yet awaited.
  FutureAwaitable(FutureAwaitable&& other) noexcept(std::is_nothrow_move_constructible_v<F>)
      : future_(std::move(other.future_)), resume_(std::move(other.resume_)) {}
  FutureAwaitable& operator=(FutureAwaitable&&) = delete;
  ~FutureAwaitable() {
    if (block_ == nullptr) return;
    block_->bridge.detach();  // nothing if done; else no waker polls the future from here on
    detail::await_block_release(block_);
  }

  /// Polls the future: Ready does not suspend the coroutine.
  bool await_ready() {
    if (!poll_here()) return false;
    if (block_ != nullptr) (void)block_->bridge.ready();
    return true;
  }

  /// Suspends unless the future became Ready in the meantime; from here
  /// on, a wake polls it and the one that sees it Ready resumes.
  bool await_suspend(std::coroutine_handle<> coroutine) {
    coroutine_ = coroutine;
    for (;;) {
      if (out_of_memory_) throw std::bad_alloc();  // no block for a waker: it could never be woken
      if (block_ == nullptr) {
        // No waker kept: only a wake during the poll (yield_now's) calls for another.
        if (!std::exchange(woken_during_poll_, false)) return true;
      } else if (block_->bridge.pending() == detail::AwaitBridge::Next::Suspend) {
        return true;
      }
      if (poll_here()) {
        if (block_ != nullptr) (void)block_->bridge.ready();
        return false;
      }
    }
  }

  /// The future's output (its exception rethrown).
  Output await_resume() {
    if (error_) std::rethrow_exception(error_);
    if constexpr (!std::is_void_v<Output>) return std::move(*output_);
  }

 private:
  // Polls the future with the block's waker, or with the lazy one until a
  // clone makes the block. Stores the output or exception: true when done.
  bool poll_here() noexcept {
    RawWaker raw = block_ != nullptr ? RawWaker{block_, &detail::await_block_vtable} : RawWaker{this, &lazy_vtable()};
    WakerRef waker(raw);
    Context cx(waker);
    try {
      Poll<Output> polled = future_.poll(cx);
      if (polled.is_pending()) return false;
      if constexpr (!std::is_void_v<Output>) output_.emplace(std::move(polled).value());
    } catch (...) {
      error_ = std::current_exception();
    }
    return true;
  }

  // The block, made at the first clone of the lazy waker (during a poll on
  // the coroutine's thread, so no other thread can see this field yet).
  detail::AwaitBlock* make_block() noexcept {
    if (block_ != nullptr) return block_;
    void* memory;
    try {
      memory = detail::slab_allocate(sizeof(detail::AwaitBlock));
    } catch (const std::bad_alloc&) {
      out_of_memory_ = true;
      return nullptr;
    }
    block_ = ::new (memory) detail::AwaitBlock{{}, this, &poll_erased, &resume_erased};
    if (woken_during_poll_) (void)block_->bridge.wake();  // the wake already given, kept
    return block_;
  }

  static bool poll_erased(void* self) { return static_cast<FutureAwaitable*>(self)->poll_here(); }
  static void resume_erased(void* self) {
    auto* awaitable = static_cast<FutureAwaitable*>(self);
    Resume resume = awaitable->resume_;  // the coroutine may destroy the awaitable as it resumes
    resume(awaitable->coroutine_);
  }

  // The waker of polls made before the block exists: it lives only during
  // those polls, so its data is the awaitable itself. A clone makes the
  // block and hands out a waker of it.
  static const RawWakerVTable& lazy_vtable() noexcept {
    static constexpr RawWakerVTable table{
        [](const void* data) { return lazy_clone(data); },
        [](const void* data) { lazy_wake(data); },
        [](const void* data) { lazy_wake(data); },
        [](const void*) {},
    };
    return table;
  }
  static RawWaker lazy_clone(const void* data) noexcept {
    auto* self = static_cast<FutureAwaitable*>(const_cast<void*>(data));
    detail::AwaitBlock* block = self->make_block();
    if (block == nullptr) return detail::noop_raw;  // await_suspend throws bad_alloc
    block->bridge.retain();
    return RawWaker{block, &detail::await_block_vtable};
  }
  static void lazy_wake(const void* data) noexcept {
    auto* self = static_cast<FutureAwaitable*>(const_cast<void*>(data));
    if (self->block_ != nullptr) {
      (void)self->block_->bridge.wake();  // during the poll: marks it to poll again
    } else {
      self->woken_during_poll_ = true;
    }
  }

  F future_;
  Resume resume_;
  detail::AwaitBlock* block_ = nullptr;
  std::coroutine_handle<> coroutine_;
  bool woken_during_poll_ = false;
  bool out_of_memory_ = false;
  std::conditional_t<std::is_void_v<Output>, bool, std::optional<Output>> output_{};
  std::exception_ptr error_;
};

/// `co_await awaitable(f)` in any C++20 coroutine awaits the pollux future
/// `f`; the coroutine is resumed on the thread that wakes f, by `resume`.
/// No allocation when f is Ready at once; otherwise one slab block (no
/// malloc in steady state) for the wakers f keeps.
template <Future F, class Resume = ResumeInline>
FutureAwaitable<std::decay_t<F>, Resume> awaitable(F&& future, Resume resume = Resume{}) {
  return FutureAwaitable<std::decay_t<F>, Resume>(std::forward<F>(future), std::move(resume));
}

}  // namespace pollux
