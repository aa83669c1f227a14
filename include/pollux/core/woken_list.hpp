// The one piece of list handling that every "queue of woken children"
// shares (join_all's child wakers, FuturesUnordered): wakers push nodes on
// a lock-free stack, the poller takes the whole stack at once with an
// exchange (so there is no ABA) and turns it into wake order.
#pragma once

#include <atomic>
#include <utility>

namespace pollux::detail {

// Reverses a drained stack (newest first, linked through `Next`) into wake
// order. Returns its first and last node (both null for an empty stack).
template <class Node, std::atomic<Node*> Node::*Next>
std::pair<Node*, Node*> reverse_drained(Node* newest) noexcept {
  Node* last = newest;
  Node* ordered = nullptr;
  while (newest != nullptr) {
    Node* next = (newest->*Next).load(std::memory_order_relaxed);
    (newest->*Next).store(ordered, std::memory_order_relaxed);
    ordered = newest;
    newest = next;
  }
  return {ordered, last};
}

}  // namespace pollux::detail
