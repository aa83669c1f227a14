// The shared part of a Scope: the list of its live children, their count,
// the first failure, and the owner's waker, under one lock. Children are
// linked at spawn and unlinked by whoever ends them; a canceller claims
// idle children under the lock (ScopeCell) and destroys their futures
// after letting it go, so no user destructor and no wake runs under it.
// The scope outlives every child that is not gone: its destructor waits
// until the count of live children is zero (rule 5 for borrowed frames).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <exception>
#include <optional>
#include <utility>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/waker.hpp"
#include "pollux/exec/detail/exec_context.hpp"
#include "pollux/exec/detail/scope_cell.hpp"

namespace pollux::detail {

class ScopeState;

/// The part of a scoped child's future that its scope sees: the ownership
/// word, the links of the scope's list, and a waker of the child's own task.
struct ScopeChild {
  ScopeCell cell;
  /// Set when linked; read by the child only while its cell is not kGone.
  ScopeState* scope = nullptr;
  ScopeChild* prev = nullptr;  // the scope's list, under its lock
  ScopeChild* next = nullptr;
  /// A waker of the child's task, made at spawn: a claimer that destroyed
  /// the future wakes the task with it, so that it finishes at once (its
  /// next poll finds kGone) instead of waiting forever for a wake that the
  /// destroyed future can no longer arrange.
  Waker task;
  /// Destroys the user's future (the claimer's or the dropping task's turn).
  void (*destroy)(ScopeChild*) noexcept = nullptr;
};

/// One entry of this thread's chain of scopes in use: the body of a scope
/// being polled (or made), or a child of one. Debug builds walk it to check
/// that a spawn comes from the scope's own task or one of its children, and
/// that no scope is destroyed from inside one of its own children.
struct ScopeFrame {
  const ScopeState* scope = nullptr;
  bool child = false;
  const ScopeFrame* outer = nullptr;
};

/// Pushes a frame on this thread's chain for its lifetime (debug builds).
class ScopeFrameGuard {
 public:
  ScopeFrameGuard(const ScopeState* scope, bool child) noexcept {
    if constexpr (check_contract) {
      frame_ = ScopeFrame{scope, child, exec_context().scope_frames};
      exec_context().scope_frames = &frame_;
    }
  }
  ~ScopeFrameGuard() {
    if constexpr (check_contract) exec_context().scope_frames = frame_.outer;
  }
  ScopeFrameGuard(const ScopeFrameGuard&) = delete;
  ScopeFrameGuard& operator=(const ScopeFrameGuard&) = delete;

 private:
  ScopeFrame frame_;
};

/// The scope's lock, list, count, failure and owner waker.
class ScopeState {
 public:
  ScopeState() = default;
  ScopeState(const ScopeState&) = delete;
  ScopeState& operator=(const ScopeState&) = delete;
  ~ScopeState() { assert(live_ == 0 && head_ == nullptr && "a Scope destroyed with live children"); }

  /// Links a new child, its task not yet scheduled (Scope::spawn); false,
  /// leaving it unlinked, when the scope is closed.
  bool link(ScopeChild& child) POLLUX_EXCLUDES(lock_) {
    MutexLock lock(lock_);
    if (closed_) return false;
    child.scope = this;
    child.prev = nullptr;
    child.next = head_;
    if (head_ != nullptr) head_->prev = &child;
    head_ = &child;
    ++live_;
    return true;
  }

  /// A child's worker destroyed its future (it was Ready, threw, or a
  /// cancel came during its poll); its cell goes to kGone here. A failure
  /// is recorded if it is the first, and cancels the other children.
  void child_ended(ScopeChild& child) noexcept POLLUX_EXCLUDES(lock_) {
    std::optional<Waker> owner;  // engaged only for the last child: no waker made per child
    {
      MutexLock lock(lock_);
      child.cell.finish_poll();
      unlink(child);
      if (release()) owner.emplace(std::move(waker_));
    }
    if (owner) std::move(*owner).wake();
  }

  /// The task of a child that did not end is dropped (its executor shut
  /// down): its future is destroyed here, unless a canceller owns it now,
  /// in which case this waits for that canceller to finish.
  /// Precondition: no poll of the child is in flight.
  static void child_dropped(ScopeChild& child) noexcept {
    if (child.cell.phase() == ScopeCell::kIdle) {
      ScopeState& scope = *child.scope;  // alive: the child is not gone, so it is counted
      bool claimed = false;
      {
        MutexLock lock(scope.lock_);
        if (child.cell.cancel() == ScopeCell::Cancel::Claimed) {
          scope.unlink(child);
          claimed = true;
        }
      }
      if (claimed) {
        child.destroy(&child);
        child.cell.to_gone();
        scope.release_unlocked();
        return;
      }
    }
    child.cell.wait_gone();
  }

  /// Closes the scope and cancels every child by destruction: an idle one
  /// here and now, one in a poll on another worker when that poll ends.
  void cancel_all() noexcept POLLUX_EXCLUDES(lock_) {
    ScopeChild* claimed;
    {
      MutexLock lock(lock_);
      closed_ = true;
      claimed = claim_all();
    }
    finish_claimed(claimed);
  }

  /// Records the body's failure (if it is the first) and cancels every child.
  void fail(std::exception_ptr error) noexcept POLLUX_EXCLUDES(lock_) {
    {
      MutexLock lock(lock_);
      if (!failure_) {
        failure_ = std::move(error);
        failed_.store(true, std::memory_order_release);
      }
    }
    cancel_all();
  }

  /// True once a child or the body failed (the owner's lock-free look).
  bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }

  /// The owner's poll: true when it need not wait; else keeps `waker` for
  /// the child that fails or ends last. While the body runs
  /// (`until_drained` false) it waits for a failure; after, for the last
  /// child to end, failure or not: a failed scope completes only once the
  /// children still in a poll on other workers have ended too.
  bool park(const Waker& waker, bool until_drained) noexcept POLLUX_EXCLUDES(lock_) {
    MutexLock lock(lock_);
    if (until_drained ? live_ == 0 : failure_ != nullptr) return true;
    if (!waker_.will_wake(waker)) waker_ = waker;
    return false;
  }

  /// The first failure, taken (null if none).
  std::exception_ptr take_failure() noexcept POLLUX_EXCLUDES(lock_) {
    MutexLock lock(lock_);
    return std::exchange(failure_, nullptr);
  }

  /// The owner's destructor: cancels every child and returns once none is
  /// left, after waiting out any poll in flight on another worker.
  void drain() noexcept POLLUX_EXCLUDES(lock_) {
    if (check_contract && in_frame(true)) {
      contract_violation_text(
          "a Scope was destroyed from inside one of its own children: its destructor would wait for that "
          "child's poll, which is this one, forever");
    }
    cancel_all();
    UniqueLock lock(lock_);
    draining_ = true;
    drained_.wait(lock, [this]() POLLUX_REQUIRES(lock_) { return live_ == 0; });
  }

  /// Debug builds: stops the program unless this thread is polling the
  /// scope's body or one of its children (Scope::spawn's check).
  void check_in_use() const noexcept {
    if (check_contract && !in_frame(false)) {
      contract_violation_text(
          "Scope::spawn was called from a task that is neither the scope's owner nor one of its children (a "
          "scope belongs to the task that polls it; pass work to it through a channel instead)");
    }
  }

  /// Closes the scope: later spawns are refused.
  void close() noexcept POLLUX_EXCLUDES(lock_) {
    MutexLock lock(lock_);
    closed_ = true;
  }

  /// Whether spawns are refused (close, request_stop, cancel, or a failure).
  bool closed() const noexcept POLLUX_EXCLUDES(lock_) {
    MutexLock lock(lock_);
    return closed_;
  }

  /// The children that have not ended.
  std::size_t live() const noexcept POLLUX_EXCLUDES(lock_) {
    MutexLock lock(lock_);
    return live_;
  }

  /// child_ended for a child that threw: the first failure closes the
  /// scope, cancels the other children, and wakes the owner to cancel its body.
  void child_failed(ScopeChild& child, std::exception_ptr error) noexcept POLLUX_EXCLUDES(lock_) {
    ScopeChild* claimed = nullptr;
    Waker owner;
    {
      MutexLock lock(lock_);
      child.cell.finish_poll();
      unlink(child);
      bool first_failure = !failure_;
      if (first_failure) {
        failure_ = std::move(error);
        failed_.store(true, std::memory_order_release);
        closed_ = true;
        claimed = claim_all();
      }
      if (release() || first_failure) owner = std::move(waker_);
    }
    std::move(owner).wake();
    finish_claimed(claimed);
  }

 private:
  mutable Mutex lock_;

  // Whether this thread polls this scope's body or one of its children
  // (`child_only`: one of its children), by its chain of frames.
  bool in_frame(bool child_only) const noexcept {
    for (const ScopeFrame* f = exec_context().scope_frames; f != nullptr; f = f->outer) {
      if (f->scope == this && (f->child || !child_only)) return true;
    }
    return false;
  }

  void unlink(ScopeChild& child) POLLUX_REQUIRES(lock_) {
    if (child.prev != nullptr) {
      child.prev->next = child.next;
    } else {
      head_ = child.next;
    }
    if (child.next != nullptr) child.next->prev = child.prev;
    child.prev = child.next = nullptr;
  }

  // Claims every idle child (unlinked, returned as a list through `next`)
  // and asks every child in a poll to destroy its future when it ends.
  ScopeChild* claim_all() POLLUX_REQUIRES(lock_) {
    ScopeChild* claimed = nullptr;
    for (ScopeChild* child = head_; child != nullptr;) {
      ScopeChild* next = child->next;
      if (child->cell.cancel() == ScopeCell::Cancel::Claimed) {
        unlink(*child);
        child->next = claimed;
        claimed = child;
      }
      child = next;
    }
    return claimed;
  }

  // One child fewer; true when it was the last: the caller takes the
  // owner's waker (woken after the unlock), and a draining destructor goes on.
  bool release(std::size_t count = 1) POLLUX_REQUIRES(lock_) {
    assert(live_ >= count);
    live_ -= count;
    if (live_ != 0) return false;
    if (draining_) drained_.notify_all();  // under the lock: the destructor cannot return before the unlock
    return true;
  }

  void release_unlocked() noexcept POLLUX_EXCLUDES(lock_) {
    Waker owner;
    {
      MutexLock lock(lock_);
      if (release()) owner = std::move(waker_);
    }
    std::move(owner).wake();
  }

  // Destroys each claimed child's future on this thread and wakes its task
  // so that it finishes, then releases them all at once: that release may
  // be the scope's last access.
  void finish_claimed(ScopeChild* claimed) noexcept POLLUX_EXCLUDES(lock_) {
    if (claimed == nullptr) return;
    std::size_t count = 0;
    while (claimed != nullptr) {
      ScopeChild& child = *claimed;
      claimed = child.next;
      child.next = nullptr;
      child.destroy(&child);
      Waker task = std::move(child.task);  // before kGone: from then on the child may be freed
      child.cell.to_gone();
      std::move(task).wake();
      ++count;
    }
    Waker owner;
    {
      MutexLock lock(lock_);
      if (release(count)) owner = std::move(waker_);
    }
    std::move(owner).wake();
  }

  CondVar drained_;
  ScopeChild* head_ POLLUX_GUARDED_BY(lock_) = nullptr;
  std::size_t live_ POLLUX_GUARDED_BY(lock_) = 0;
  Waker waker_ POLLUX_GUARDED_BY(lock_);
  std::exception_ptr failure_ POLLUX_GUARDED_BY(lock_);
  bool closed_ POLLUX_GUARDED_BY(lock_) = false;
  bool draining_ POLLUX_GUARDED_BY(lock_) = false;
  Atomic<bool> failed_{false};
};

}  // namespace pollux::detail
