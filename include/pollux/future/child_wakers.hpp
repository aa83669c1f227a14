// ChildWakers: one waker per child of a combinator, so a wake-up costs the
// parent O(1): the woken child's node is pushed onto a lock-free list and
// the parent polls exactly the children on that list (join_all, and the
// FuturesUnordered of the stream layer, are built on it).
//
// The nodes live in one reference-counted block, not in the combinator:
// rule 6 lets a child's waker be woken from any thread after the combinator
// is gone, so each waker clone holds a reference and the block is freed by
// the last one. Only the parent's waker is replaced on each poll (rule 2),
// through an AtomicWaker.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

#include "pollux/core/atomic_waker.hpp"
#include "pollux/core/coop.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/core/woken_list.hpp"
#include "pollux/core/waker.hpp"

namespace pollux::detail {

class ChildWakers {
 public:
  // Every child starts out woken, so the first poll visits each one.
  explicit ChildWakers(std::size_t n) : block_(make_arc<Block>(n)) {
    for (std::size_t i = n; i-- > 0;) {
      block_->nodes[i].woken.store(true, std::memory_order_relaxed);
      block_->nodes[i].next.store(local_, std::memory_order_relaxed);
      local_ = &block_->nodes[i];
    }
    local_tail_ = n == 0 ? nullptr : &block_->nodes[n - 1];
  }

  ChildWakers(ChildWakers&& other) noexcept
      : block_(std::move(other.block_)),
        local_(std::exchange(other.local_, nullptr)),
        local_tail_(std::exchange(other.local_tail_, nullptr)) {}
  ChildWakers& operator=(ChildWakers&&) = delete;

  ~ChildWakers() {
    // A late child wake must not reach our task (rule 5); the block itself
    // stays until the last child waker is dropped.
    if (block_) block_->parent.take();
  }

  // The parent's waker from the current poll: the one a child wake reaches.
  void register_parent(const Waker& waker) noexcept { block_->parent.register_waker(waker); }

  // Calls fn(index, child_waker) for each child woken since the last call,
  // in the order they were woken. A child woken again while fn polls it is
  // queued for the next poll (its wake also woke the parent), so a child
  // that keeps waking itself cannot trap the parent in this loop.
  // Stops early when the task's coop budget is spent (the children left
  // would only answer Pending): returns true when children are left, and
  // the caller must then wake its own task to come back for them.
  template <class Fn>
  bool for_each_woken(Fn&& fn) {
    append_shared();
    while (Node* node = local_) {
      if (coop::remaining() == 0) return true;
      local_ = node->next.load(std::memory_order_relaxed);
      if (local_ == nullptr) local_tail_ = nullptr;
      // Cleared before the poll: a wake from now on queues the node again.
      node->woken.store(false, std::memory_order_release);
      fn(static_cast<std::size_t>(node - block_->nodes.get()), WakerRef(RawWaker{node, &kVTable}));
    }
    return false;
  }

 private:
  struct Block;
  struct Node {
    std::atomic<bool> woken{false};
    std::atomic<Node*> next{nullptr};
    Block* block = nullptr;
  };

  // Referenced by the ChildWakers and by every child waker clone.
  struct Block : RefCounted<Block> {
    explicit Block(std::size_t n) : nodes(std::make_unique<Node[]>(n)) {
      for (std::size_t i = 0; i < n; ++i) nodes[i].block = this;
    }

    std::atomic<Node*> woken_head{nullptr};  // Treiber stack, newest first
    AtomicWaker parent;
    std::unique_ptr<Node[]> nodes;
  };

  // Takes the whole shared stack at once (so no ABA), reverses it into wake
  // order and appends it to the local list. Nodes left on the local list
  // (fn threw) are kept: their wakes were already spent on waking us.
  void append_shared() noexcept {
    Node* stack = block_->woken_head.exchange(nullptr, std::memory_order_acquire);
    if (stack == nullptr) return;
    auto [ordered, ordered_tail] = reverse_drained<Node, &Node::next>(stack);
    if (local_ == nullptr) {
      local_ = ordered;
    } else {
      local_tail_->next.store(ordered, std::memory_order_relaxed);
    }
    local_tail_ = ordered_tail;
  }

  static Node* node_of(const void* data) noexcept { return static_cast<Node*>(const_cast<void*>(data)); }

  static RawWaker clone(const void* data) noexcept {
    intrusive_ptr_add_ref(node_of(data)->block);
    return RawWaker{data, &kVTable};
  }
  static void wake(const void* data) noexcept {
    wake_by_ref(data);
    drop(data);
  }
  static void wake_by_ref(const void* data) noexcept {
    Node* node = node_of(data);
    if (node->woken.exchange(true, std::memory_order_acq_rel)) return;  // already queued
    Block* block = node->block;
    Node* head = block->woken_head.load(std::memory_order_relaxed);
    do {
      node->next.store(head, std::memory_order_relaxed);
    } while (!block->woken_head.compare_exchange_weak(head, node, std::memory_order_release,
                                                      std::memory_order_relaxed));
    // Only the wake that finds the stack empty wakes the parent: the parent
    // drains the whole stack after it registers, so later pushes ride along.
    if (head == nullptr) block->parent.wake_by_ref();
  }
  static void drop(const void* data) noexcept { intrusive_ptr_release(node_of(data)->block); }

  static constexpr RawWakerVTable kVTable{&clone, &wake, &wake_by_ref, &drop};

  Arc<Block> block_;
  Node* local_ = nullptr;       // drained nodes not yet visited; owned by the polling thread
  Node* local_tail_ = nullptr;  // its last node, so appending costs O(1)
};

}  // namespace pollux::detail
