// CancellationToken: tokio-util's, for telling many tasks to stop. cancel()
// sets a flag that every copy of the token sees (is_cancelled() is one
// atomic load) and completes every cancelled() future; child_token() gives
// a token that a cancel of its parent reaches, but whose own cancel reaches
// only it and its descendants. drop_guard() cancels when it goes out of
// scope, unless disarmed.
//
// A cancelled() future embeds a Notify waiter node (no allocation per
// wait; the waker of its latest poll is kept, rule 2) and holds a copy of
// the token, so it can always still be cancelled; destroying it unlinks
// the node (rule 5) and loses nothing. Thread-safe; cancel() wakes nobody
// while it holds the lock that guards the tree of tokens, and walks a tree
// of any depth without recursion.
//
// Async-signal-safe: is_cancelled() (one atomic load) alone. cancel() takes
// locks and wakes tasks, so a signal handler must not call it (one that
// interrupts a thread inside cancel() deadlocks): use
// signal::cancel_on(SIGTERM, token) from runtime/signal.hpp, which cancels
// from a task once the signal is delivered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <optional>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/intrusive_list.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/sync/notify.hpp"

namespace pollux {

namespace detail {

// One token and its copies. The links between nodes (parent, children,
// sibling, in_cancel) change only under one lock (cancel_tree_mutex in
// src/sync/cancellation_token.cpp): they change when a child is made, when
// the last copy of a token goes and when a token is cancelled, never per
// wait. A node lives as long as its copies, its cancelled() futures (which
// hold a copy) and a cancel walking through it (which holds a reference).
struct CancelNode : RefCounted<CancelNode> {
  pollux::detail::Atomic<bool> cancelled{false};
  pollux::detail::Atomic<std::size_t> handles{1};  // CancellationToken copies
  Notify notify;                                   // cancelled() futures wait on it

  CancelNode* parent = nullptr;  // null for a root, a cancelled node, or one a cancel is walking
  bool in_cancel = false;        // a cancel took it from its parent and will cancel it and its children
  ListHook<CancelNode> sibling;  // in parent->children, or in a cancel's list of nodes to visit
  using Children = IntrusiveList<CancelNode, &CancelNode::sibling>;
  Children children;
};

// A new child of `parent` (already cancelled if the parent is).
Arc<CancelNode> cancel_child(CancelNode& parent);
// Cancels `node` and every descendant, waking their cancelled() futures.
void cancel_tree(CancelNode& node) noexcept;
// The last copy of `node` went: unlinks it, handing its children to its
// parent (or making them roots), so no descendant keeps it alive.
void cancel_detach(CancelNode& node) noexcept;

}  // namespace detail

/// A shared flag that tells tasks to stop: every copy sees cancel().
class CancellationToken {
 public:
  class Cancelled;
  class DropGuard;

  /// A new token, not cancelled, with no parent.
  CancellationToken() : node_(make_arc<detail::CancelNode>()) {}
  /// Another handle on the same token.
  CancellationToken(const CancellationToken& other) noexcept : node_(other.node_) {
    if (node_) node_->handles.fetch_add(1, std::memory_order_relaxed);
  }
  /// Takes `other`'s handle; `other` is left empty (any use of it throws std::logic_error).
  CancellationToken(CancellationToken&& other) noexcept : node_(std::move(other.node_)) {}
  /// Lets go of this handle, then shares `other`'s token.
  CancellationToken& operator=(CancellationToken other) noexcept {
    std::swap(node_, other.node_);
    return *this;
  }
  /// The last handle of a child token unlinks it from its parent.
  ~CancellationToken() {
    if (node_ && node_->handles.fetch_sub(1, std::memory_order_acq_rel) == 1) detail::cancel_detach(*node_);
  }

  /// Cancels this token and its children (and theirs): is_cancelled() is
  /// true from now on, and every cancelled() future completes. Idempotent.
  /// Not async-signal-safe: from a signal, use signal::cancel_on.
  void cancel() const {
    check("cancel");
    detail::cancel_tree(*node_);
  }
  /// Whether cancel() ran on this token or on an ancestor.
  bool is_cancelled() const {
    check("is_cancelled");
    return node_->cancelled.load(std::memory_order_acquire);
  }
  /// A token that this one's cancel reaches, and whose own cancel does not
  /// reach this one. Already cancelled if this one is.
  CancellationToken child_token() const {
    check("child_token");
    return CancellationToken(detail::cancel_child(*node_));
  }
  /// A future that completes once the token is cancelled.
  Cancelled cancelled() const;
  /// A guard that cancels the token when destroyed, unless disarmed.
  DropGuard drop_guard() const;

 private:
  explicit CancellationToken(Arc<detail::CancelNode> node) noexcept : node_(std::move(node)) {}
  void check(const char* what) const;

  Arc<detail::CancelNode> node_;
};

/// What cancelled() returns: Ready once the token is cancelled.
class [[nodiscard("futures do nothing unless polled")]] CancellationToken::Cancelled {
 public:
  using Output = void;

  /// What cancelled() makes; it holds a copy of the token.
  explicit Cancelled(CancellationToken token) noexcept : token_(std::move(token)) {}
  Cancelled(Cancelled && other) noexcept : token_(std::move(other.token_)), done_(other.done_) {}
  Cancelled& operator=(Cancelled&&) = delete;

  /// Ready once the token (or an ancestor) is cancelled.
  Poll<void> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Cancelled, !done_);
    detail::CancelNode& node = *token_.node_;
    // The wait is made before the flag is read: a cancel after the read
    // completes it (notify_waiters reaches a wait made before it ran).
    if (!waiting_) waiting_.emplace(node.notify.notified());
    if (!node.cancelled.load(std::memory_order_acquire) && waiting_->poll(cx).is_pending()) return pending;
    waiting_.reset();
    done_ = true;
    return ready();
  }

 private:
  CancellationToken token_;
  std::optional<Notify::Notified> waiting_;
  bool done_ = false;
};

/// Cancels its token when destroyed, unless disarm() took the token back.
class CancellationToken::DropGuard {
 public:
  /// Guards `token`.
  explicit DropGuard(CancellationToken token) noexcept : token_(std::move(token)) {}
  /// Takes over `other`'s token; `other` cancels nothing.
  DropGuard(DropGuard&& other) noexcept : token_(std::exchange(other.token_, std::nullopt)) {}
  DropGuard& operator=(DropGuard&&) = delete;
  /// Cancels the token, unless disarmed.
  ~DropGuard() {
    if (token_) token_->cancel();
  }
  /// Gives the token back without cancelling it.
  CancellationToken disarm() {
    CancellationToken token = std::move(token_.value());
    token_.reset();
    return token;
  }

 private:
  std::optional<CancellationToken> token_;
};

inline CancellationToken::Cancelled CancellationToken::cancelled() const {
  check("cancelled");
  return Cancelled(*this);
}

inline CancellationToken::DropGuard CancellationToken::drop_guard() const {
  check("drop_guard");
  return DropGuard(*this);
}

}  // namespace pollux
