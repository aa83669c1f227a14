// The tree of cancellation tokens: making a child, cancelling a subtree,
// and unlinking a token whose last copy went. One lock guards every link
// of every tree; it is taken only by these three operations (once per
// child token made, per cancel, per token gone), never by is_cancelled()
// or a wait, and nothing is woken while it is held.
#include "pollux/sync/cancellation_token.hpp"

#include <mutex>
#include <stdexcept>
#include <string>

#include "pollux/core/detail/concurrency.hpp"

namespace pollux {

namespace detail {

namespace {
pollux::detail::Mutex cancel_tree_mutex;
}  // namespace

Arc<CancelNode> cancel_child(CancelNode& parent) {
  Arc<CancelNode> child = make_arc<CancelNode>();
  detail::MutexLock lock(cancel_tree_mutex);
  // A cancelled parent has no children: its child starts cancelled. So
  // does the child of a parent a cancel is walking (in_cancel), which
  // would otherwise be missed once the walk has passed it.
  if (parent.cancelled.load(std::memory_order_relaxed) || parent.in_cancel) {
    child->cancelled.store(true, std::memory_order_release);
    return child;
  }
  child->parent = &parent;
  parent.children.push_back(*child);
  return child;
}

void cancel_tree(CancelNode& root) noexcept {
  // A worklist, not recursion: a chain of a million child tokens must not
  // take a million stack frames. Each node in it holds a reference taken
  // when it left its parent's list; only this cancel touches the list (a
  // node in it is `in_cancel`, which cancel_child and cancel_detach leave
  // alone), so it is walked outside the lock.
  CancelNode::Children pending;
  CancelNode* node = &root;  // the caller holds the root
  for (;;) {
    bool cancelled_now = false;
    {
      detail::MutexLock lock(cancel_tree_mutex);
      // Cleared in the same hold of the lock that cancels it, so that no
      // one sees the node neither cancelled nor being cancelled.
      node->in_cancel = false;
      if (!node->cancelled.load(std::memory_order_relaxed)) {
        cancelled_now = true;
        node->cancelled.store(true, std::memory_order_release);
        if (node->parent != nullptr) {
          node->parent->children.erase(*node);
          node->parent = nullptr;
        }
        while (!node->children.empty()) {
          CancelNode& child = node->children.front();
          node->children.pop_front();
          child.parent = nullptr;
          child.in_cancel = true;  // its last copy may go meanwhile: our reference keeps it
          intrusive_ptr_add_ref(&child);
          pending.push_back(child);
        }
      }
    }
    if (cancelled_now) node->notify.notify_waiters();  // outside the lock
    if (node != &root) intrusive_ptr_release(node);
    if (pending.empty()) return;
    node = &pending.front();
    pending.pop_front();
  }
}

void cancel_detach(CancelNode& node) noexcept {
  detail::MutexLock lock(cancel_tree_mutex);
  // A cancel is about to visit it, or did: its children are the cancel's
  // (or gone already).
  if (node.in_cancel || node.cancelled.load(std::memory_order_relaxed)) return;
  CancelNode* parent = node.parent;
  if (parent != nullptr) {
    parent->children.erase(node);
    node.parent = nullptr;
  }
  // Its children now hang from its parent, whose cancel still reaches
  // them, or become roots, which nothing else can cancel.
  while (!node.children.empty()) {
    CancelNode& child = node.children.front();
    node.children.pop_front();
    child.parent = parent;
    if (parent != nullptr) parent->children.push_back(child);
  }
}

}  // namespace detail

void CancellationToken::check(const char* what) const {
  if (!node_) throw std::logic_error(std::string("pollux::CancellationToken::") + what + ": use of a moved-from token");
}

}  // namespace pollux
