// The queue of woken children that gives join_all and FuturesUnordered an
// O(1) cost per wake-up: each child's waker pushes the child's node onto a
// lock-free stack shared with the parent, and only the push that finds the
// stack empty wakes the parent. The parent takes the whole stack in one
// exchange (so there is no ABA), turns it into wake order and visits the
// nodes from a list only it touches. Rule 6 lets the wakers run on any
// thread at any time; the node's `queued` flag makes a second wake of a
// node already queued cost one atomic exchange and nothing else.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/core/detail/concurrency.hpp"

#include "pollux/core/atomic_waker.hpp"

namespace pollux::detail {

/// The shared half: written by wakers on any thread, drained by the parent.
/// `Queued` is the node's "on a queue" flag and `Next` its link; both are
/// the node's own, so a node is on at most one list at a time.
template <class Node, Atomic<bool> Node::*Queued, Atomic<Node*> Node::*Next>
class WokenQueue {
 public:
  /// Queues `node` unless it is queued already; the push that finds the
  /// stack empty wakes the parent. The parent drains the whole stack after
  /// it registers its waker, so the pushes after that one ride along.
  /// False once the queue is closed: `node` is then marked queued but on
  /// no list, and the caller gives up whatever the queue would have held.
  bool push(Node* node) noexcept {
    if ((node->*Queued).exchange(true, std::memory_order_acq_rel)) return true;
    Node* head = head_.load(std::memory_order_relaxed);
    do {
      if (head == closed_mark()) return false;
      (node->*Next).store(head, std::memory_order_relaxed);
    } while (!head_.compare_exchange_weak(head, node, std::memory_order_release, std::memory_order_relaxed));
    if (head == nullptr) parent_.wake_by_ref();
    return true;
  }

  /// Where the parent registers the waker of its latest poll (rule 2).
  AtomicWaker& parent() noexcept { return parent_; }

  /// The parent's side: moves every node pushed so far, oldest first, to
  /// the end of `list`.
  template <class List>
  void drain_into(List& list) noexcept {
    append_chain(head_.exchange(nullptr, std::memory_order_acquire), list);
  }

  /// The owner goes: moves every node pushed so far to `list`, as
  /// drain_into, and closes the queue in the same exchange, so that each
  /// push either lands before it (and is moved) or fails after it.
  template <class List>
  void close_into(List& list) noexcept {
    append_chain(head_.exchange(closed_mark(), std::memory_order_acquire), list);
  }

 private:
  // The top of the stack once closed; never a node's address.
  static Node* closed_mark() noexcept { return reinterpret_cast<Node*>(alignof(Node)); }

  template <class List>
  static void append_chain(Node* newest, List& list) noexcept {
    if (newest == nullptr || newest == closed_mark()) return;
    // The stack is newest first: reverse it into wake order.
    Node* last = newest;
    Node* ordered = nullptr;
    while (newest != nullptr) {
      Node* next = (newest->*Next).load(std::memory_order_relaxed);
      (newest->*Next).store(ordered, std::memory_order_relaxed);
      ordered = newest;
      newest = next;
    }
    list.append(ordered, last);
  }

  Atomic<Node*> head_{nullptr};  // Treiber stack, newest first
  AtomicWaker parent_;
};

/// The parent's half: the drained nodes it has not visited yet, in wake
/// order. Only the polling thread touches it. The links are the same
/// atomic `Next` the stack uses (a node is on one list at a time), read
/// and written relaxed here.
template <class Node, Atomic<Node*> Node::*Next>
class WokenList {
 public:
  WokenList() = default;
  WokenList(WokenList&& other) noexcept : head_(other.head_), tail_(other.tail_) {
    other.head_ = other.tail_ = nullptr;
  }
  WokenList& operator=(WokenList&&) = delete;

  bool empty() const noexcept { return head_ == nullptr; }

  /// Appends the chain first..last (already linked) in O(1).
  void append(Node* first, Node* last) noexcept {
    if (head_ == nullptr) {
      head_ = first;
    } else {
      (tail_->*Next).store(first, std::memory_order_relaxed);
    }
    tail_ = last;
  }

  /// Takes the oldest node; null when the list is empty.
  Node* pop() noexcept {
    Node* node = head_;
    if (node == nullptr) return nullptr;
    head_ = (node->*Next).load(std::memory_order_relaxed);
    if (head_ == nullptr) tail_ = nullptr;
    return node;
  }

 private:
  Node* head_ = nullptr;
  Node* tail_ = nullptr;  // its last node, so appending costs O(1)
};

}  // namespace pollux::detail
