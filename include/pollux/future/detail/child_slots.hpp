// ChildSlots<Payload>: the children of a combinator, each next to a waker
// of its own, so a wake-up costs the parent O(1): the woken child's node is
// pushed onto a WokenQueue and the parent polls exactly the children on it
// (join_all is built on it). A wake and the poll that follows
// touch one slot: the node and the child share its cache lines.
//
// The slots live in one reference-counted block, not in the combinator:
// rule 6 lets a child's waker be woken from any thread after the combinator
// is gone, so each waker clone holds a reference and the block is freed by
// the last one. The block is one allocation, its header followed by the
// slots, from the slab when it is small enough (a join of a few dozen
// children). The combinator constructs and destroys the payloads itself
// (rule 5: destroying it cancels the children at once); the block only
// frees the memory. Only the parent's waker is replaced on each poll
// (rule 2), through an AtomicWaker.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "pollux/core/atomic_waker.hpp"
#include "pollux/core/coop.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/slab.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/core/waker.hpp"
#include "pollux/core/detail/woken_queue.hpp"

namespace pollux::detail {

struct ChildBlock;

struct ChildNode {
  Atomic<bool> woken{false};
  std::uint32_t index = 0;
  Atomic<ChildNode*> next{nullptr};
  ChildBlock* block = nullptr;
};

// What the wakers need, whatever the payload: the reference count, and the
// queue of woken nodes with the parent's waker. The last reference frees
// the block through `destroy`, which knows its size.
struct ChildBlock {
  Atomic<std::size_t> refs{0};
  WokenQueue<ChildNode, &ChildNode::woken, &ChildNode::next> woken;
  void (*destroy)(ChildBlock*) noexcept;

  explicit ChildBlock(void (*destroy_block)(ChildBlock*) noexcept) noexcept : destroy(destroy_block) {}
  friend void intrusive_ptr_add_ref(ChildBlock* block) noexcept { block->refs.fetch_add(1, std::memory_order_relaxed); }
  friend void intrusive_ptr_release(ChildBlock* block) noexcept {
    if (block->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) block->destroy(block);
  }

  static ChildNode* node_of(const void* data) noexcept { return static_cast<ChildNode*>(const_cast<void*>(data)); }
  static RawWaker clone(const void* data) noexcept;
  static void wake(const void* data) noexcept {
    wake_by_ref(data);
    drop(data);
  }
  static void wake_by_ref(const void* data) noexcept {
    ChildNode* node = node_of(data);
    (void)node->block->woken.push(node);  // never closed: it cannot fail
  }
  static void drop(const void* data) noexcept { intrusive_ptr_release(node_of(data)->block); }
  static const RawWakerVTable vtable;
};

inline constexpr RawWakerVTable ChildBlock::vtable{&ChildBlock::clone, &ChildBlock::wake, &ChildBlock::wake_by_ref,
                                                   &ChildBlock::drop};

inline RawWaker ChildBlock::clone(const void* data) noexcept {
  intrusive_ptr_add_ref(node_of(data)->block);
  return RawWaker{data, &vtable};
}

template <class Payload>
class ChildSlots {
  struct Slot {
    Slot() noexcept {}
    ~Slot() {}  // the payload is the combinator's to destroy
    ChildNode node;
    union {
      Payload payload;
    };
  };

  // The header; its n slots follow it in the same allocation, at kSlotsAt.
  struct Block final : ChildBlock {
    static std::size_t bytes(std::size_t n) noexcept { return kSlotsAt + n * sizeof(Slot); }

    explicit Block(std::size_t n) noexcept : ChildBlock(&destroy_block), size(n) {}
    Slot* slots() noexcept { return reinterpret_cast<Slot*>(reinterpret_cast<unsigned char*>(this) + kSlotsAt); }

    // Makes the block with its slots' nodes, each woken and on `woken_list`.
    static Block* make(std::size_t n, WokenList<ChildNode, &ChildNode::next>& woken_list) {
      void* memory = allocate_bytes(bytes(n), kAlign);
      auto* block = ::new (memory) Block(n);
      Slot* slots = block->slots();
      for (std::size_t i = 0; i < n; ++i) {
        ChildNode& node = (::new (static_cast<void*>(&slots[i])) Slot())->node;
        node.block = block;
        node.index = static_cast<std::uint32_t>(i);
        node.woken.store(true, std::memory_order_relaxed);
        woken_list.append(&node, &node);
      }
      return block;
    }
    static void destroy_block(ChildBlock* base) noexcept {
      auto* block = static_cast<Block*>(base);
      const std::size_t n = block->size;
      Slot* slots = block->slots();
      for (std::size_t i = 0; i < n; ++i) slots[i].~Slot();  // the nodes; the payloads are gone already
      block->~Block();
      deallocate_bytes(block, bytes(n), kAlign);
    }

    std::size_t size;
  };
  static constexpr std::size_t kSlotsAt = (sizeof(Block) + alignof(Slot) - 1) / alignof(Slot) * alignof(Slot);
  static constexpr std::size_t kAlign = alignof(Slot) > alignof(Block) ? alignof(Slot) : alignof(Block);

 public:
  // Every child starts out woken, so the first poll visits each one. The
  // payloads are not constructed yet: see construct().
  explicit ChildSlots(std::size_t n) : size_(n) { block_ = Arc<Block>(Block::make(n, local_)); }

  ChildSlots(ChildSlots&& other) noexcept
      : block_(std::move(other.block_)),
        size_(std::exchange(other.size_, 0)),
        constructed_(std::exchange(other.constructed_, 0)),
        local_(std::move(other.local_)) {}
  ChildSlots& operator=(ChildSlots&&) = delete;

  ~ChildSlots() {
    if (!block_) return;
    for (std::size_t i = 0; i < constructed_; ++i) std::destroy_at(&block_->slots()[i].payload);
    // A late child wake must not reach our task (rule 5); the memory stays
    // until the last child waker is dropped.
    block_->woken.parent().take();
  }

  // Constructs the payloads in order, one call each.
  template <class... Args>
  void construct_next(Args&&... args) {
    std::construct_at(&block_->slots()[constructed_].payload, std::forward<Args>(args)...);
    ++constructed_;
  }

  std::size_t size() const noexcept { return size_; }
  Payload& operator[](std::size_t i) noexcept { return block_->slots()[i].payload; }

  // The parent's waker from the current poll: the one a child wake reaches.
  void register_parent(const Waker& waker) noexcept { block_->woken.parent().register_waker(waker); }

  // Calls fn(index, child_waker) for each child woken since the last call,
  // in the order they were woken. A child woken again while fn polls it is
  // queued for the next poll (its wake also woke the parent), so a child
  // that keeps waking itself cannot trap the parent in this loop.
  // Stops early when the task's coop budget is spent (the children left
  // would only answer Pending): returns true when children are left, and
  // the caller must then wake its own task to come back for them.
  template <class Fn>
  bool for_each_woken(Fn&& fn) {
    // Nodes left on the local list (fn threw, or the budget ran out) are
    // kept: their wakes were already spent on waking us.
    block_->woken.drain_into(local_);
    while (!local_.empty()) {
      if (coop::remaining() == 0) return true;
      ChildNode* node = local_.pop();
      // Cleared before the poll: a wake from now on queues the node again.
      node->woken.store(false, std::memory_order_release);
      fn(static_cast<std::size_t>(node->index), WakerRef(RawWaker{node, &ChildBlock::vtable}));
    }
    return false;
  }

 private:
  Arc<Block> block_;
  std::size_t size_;
  std::size_t constructed_ = 0;
  WokenList<ChildNode, &ChildNode::next> local_;  // drained, not yet visited
};

}  // namespace pollux::detail
