// BlockQueue<T>: the queue under mpsc channels: many senders on any
// threads, one receiver. A linked list of blocks of 32 slots (by
// default). A sender claims a position with one fetch_add on the tail
// word, writes its slot and sets the slot's READY bit in its block's
// state word (one more); the receiver reads slots in position order
// without any read-modify-write, unless it parks on an empty slot.
// Blocks the receiver has passed are reused at the end
// of the list once no sender can still be walking through them, so a warm
// queue allocates nothing per message (an unbounded one allocates at most
// one block per 32 values, when it grows).
//
// Safe reuse follows tokio's block list: a sender moves the shared
// `block_tail_` past a block only when all its slots are written, and notes
// the tail position at that moment (`observed_tail`). A sender that might
// still hold a pointer to the block claimed a position below it; once the
// receiver has read past that position, every such sender has finished.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <utility>

#include "pollux/core/atomic_waker.hpp"
#include "pollux/core/detail/concurrency.hpp"

namespace pollux::detail {

/// `BlockCap`: slots per block, a power of two (the model tests use small
/// blocks, so that a few values cross and reuse blocks).
template <class T, std::size_t BlockCap = 32>
class BlockQueue {
  static_assert(BlockCap >= 2 && (BlockCap & (BlockCap - 1)) == 0, "BlockQueue: BlockCap must be a power of two");
  static_assert(BlockCap <= 32, "BlockQueue: a block's state word holds two bits per slot, 64 in all");

 public:
  static constexpr std::size_t kBlockCap = BlockCap;

  BlockQueue() : block_tail_(new_block(0)) {
    Block* first = block_tail_.load(std::memory_order_relaxed);
    head_ = free_head_ = first;
  }
  BlockQueue(const BlockQueue&) = delete;
  BlockQueue& operator=(const BlockQueue&) = delete;
  // With no sender and no receiver left: drops what was never received.
  ~BlockQueue() {
    Block* block = free_head_;
    while (block != nullptr) {
      // Written and not received: READY, at or past the receiver's index
      // (it receives in position order, destroying what it takes).
      const Bits bits = block->bits.load(std::memory_order_acquire);
      for (std::size_t i = 0; i < kBlockCap; ++i) {
        if ((bits & ready_bit(i)) && block->start + i >= index_) {
          note_write(block->value(i), "a block queue's slot");
          block->value(i)->~T();
        }
      }
      std::unique_ptr<Block> owned(block);
      block = block->next.load(std::memory_order_acquire);
    }
  }

  // --- senders ---------------------------------------------------------

  /// Claims the next position and writes `value` there. False (value left
  /// as it was) once the queue is closed. `wake_receiver` is called when
  /// the receiver waits on this very slot.
  template <class U, class Wake>
  bool push(U&& value, Wake&& wake_receiver) {
    // claim: POSITION += 1, unless CLOSED.
    // seq_cst here and in find_block's move of block_tail_: a sender's
    // claim then its read of block_tail_, against a tail mover's store of
    // block_tail_ then its read of the tail, is store buffering. With
    // acquire and release both reads may miss the other's write: the mover
    // records a tail before this claim while this sender reads the old
    // block, which the receiver then reuses under it (the model checker's
    // "reuses no block" test walked a reused block for ever). On x86 the
    // instructions are the same.
    Word word = tail_.fetch_add(kOne, std::memory_order_seq_cst);
    if (word & kClosed) return false;
    std::size_t position = word >> 1;
    Block* block = block_tail_.load(std::memory_order_seq_cst);
    if (block->start != (position & ~kMask)) [[unlikely]]
      block = find_block(position, block);  // once per block, out of line: the common path stays short
    const std::size_t i = position & kMask;
    ::new (block->storage(i)) T(std::forward<U>(value));
    note_write(block->storage(i), "a block queue's slot");  // published by READY(i) below
    // write: READY(i) 0 -> 1. WAITING(i) was set: the receiver parked on this slot.
    // Release only: it publishes the value. Nothing the receiver wrote is read
    // here; the waker it parked with is handed over by wake_receiver's own
    // protocol (an AtomicWaker), so acquiring here ordered nothing
    // (scripts/mutate-orders: the release mutant of acq_rel broke no model test).
    if (block->bits.fetch_add(ready_bit(i), std::memory_order_release) & waiting_bit(i)) wake_receiver();
    return true;
  }

  /// Closes the queue: later pushes fail; the receiver still reads every
  /// position claimed before, then sees the end. Returns whether this call
  /// closed it (false: it was closed already).
  bool close() noexcept {
    Word word = tail_.fetch_or(kClosed, std::memory_order_acq_rel);
    if (word & kClosed) return false;
    closed_at_.store(word >> 1, std::memory_order_release);
    return true;
  }

  // --- the receiver ----------------------------------------------------

  enum class PopState { Value, Empty, Closed };

  /// What pop does when the next slot is empty: return, or mark the slot
  /// so that the sender who fills it calls its wake (the receiver
  /// registers its waker before).
  enum class IfEmpty { Return, MarkWaiting };

  /// The next value, or why there is none now.
  PopState pop(std::optional<T>& out, IfEmpty if_empty) {
    Block* block = head_block();
    const std::size_t i = index_ & kMask;
    Bits bits = block->bits.load(std::memory_order_acquire);
    // Only the receiver sets WAITING bits, so the load tells whether this
    // slot is parked on already.
    if (!(bits & ready_bit(i)) && if_empty == IfEmpty::MarkWaiting && !(bits & waiting_bit(i))) {
      // park: WAITING(i) 0 -> 1. READY(i) seen set: the value landed meanwhile.
      bits = block->bits.fetch_add(waiting_bit(i), std::memory_order_acq_rel);
    }
    if (!(bits & ready_bit(i))) {
      return closed_at_.load(std::memory_order_acquire) == index_ ? PopState::Closed : PopState::Empty;
    }
    T* value = block->value(i);
    note_write(value, "a block queue's slot");  // moved out: READY(i) must have published it
    out.emplace(std::move(*value));
    value->~T();
    ++index_;
    return PopState::Value;
  }

 private:
  using Word = std::size_t;
  static constexpr Word kClosed = 1;  // tail word: bit 0 CLOSED, bits 1+ POSITION
  static constexpr Word kOne = 2;
  static constexpr std::size_t kMask = kBlockCap - 1;
  static constexpr std::size_t kMaxSpare = 64;  // reused blocks kept beyond the senders' tail block, at most

  // A block's slot states, in one word, two bits per slot:
  //
  //   bit:   63 ........ 32+i ........ 32 | 31 ........ i ........ 0
  //          WAITING(31) .. WAITING(i) ..  | READY(31) .. READY(i) ..
  //
  //   READY(i)    slot i holds its value, or held it: the bit stays set
  //               once the receiver took the value, so that is_final()
  //               sees every slot as written.
  //   WAITING(i)  the receiver waits for slot i: its writer wakes it.
  //
  // Transitions:
  //   write  (the sender of slot i)  READY(i) 0 -> 1; WAITING(i) seen set:
  //                                  wake the receiver.
  //   park   (the receiver, slot i   WAITING(i) 0 -> 1; READY(i) seen set:
  //           not READY when read)   the value is there, take it.
  //   reset  (the receiver, reuse:   every bit -> 0.
  //           no sender can reach
  //           the block)
  // Each bit is set at most once between resets (a position has one
  // sender; the receiver parks on a slot once), so the two setting
  // transitions add their bit: a fetch_or that returns the word before,
  // in one instruction (lock xadd) where a fetch_or would be a
  // compare-and-swap loop. The write publishes the value (release) and
  // sees the park (acquire), as the park sees the write.
  using Bits = std::uint64_t;
  static constexpr Bits ready_bit(std::size_t i) noexcept { return Bits{1} << i; }
  static constexpr Bits waiting_bit(std::size_t i) noexcept { return Bits{1} << (32 + i); }
  static constexpr Bits kAllReady = (Bits{1} << kBlockCap) - 1;

  struct Block {
    explicit Block(std::size_t start) noexcept : start(start) {}
    std::size_t start;  // the position of slot 0
    Atomic<Block*> next{nullptr};
    std::size_t observed_tail = 0;  // set before `released`
    Atomic<bool> released{false};   // block_tail_ moved past it
    Atomic<Bits> bits{0};           // the slots' states, above
    alignas(T) unsigned char slots[kBlockCap][sizeof(T)];

    void* storage(std::size_t i) noexcept { return slots[i]; }
    T* value(std::size_t i) noexcept { return std::launder(reinterpret_cast<T*>(slots[i])); }
    bool is_final() const noexcept { return (bits.load(std::memory_order_acquire) & kAllReady) == kAllReady; }
  };

  static Block* new_block(std::size_t start) { return std::make_unique<Block>(start).release(); }

  // Appends a new block after `block` and returns block's successor, which
  // is the new one unless another thread appended first (then ours goes
  // further down the list, so the allocation is not wasted).
  static Block* grow(Block* block) {
    Block* fresh = new_block(block->start + kBlockCap);
    Block* next = nullptr;
    if (block->next.compare_exchange_strong(next, fresh, std::memory_order_acq_rel, std::memory_order_acquire)) {
      return fresh;
    }
    Block* at = next;
    for (;;) {
      fresh->start = at->start + kBlockCap;
      Block* after = nullptr;
      if (at->next.compare_exchange_strong(after, fresh, std::memory_order_acq_rel, std::memory_order_acquire)) break;
      at = after;
    }
    return next;
  }

  // The block of `position`, from `block` (block_tail_ as read), which
  // is an earlier one.
  [[gnu::noinline]] Block* find_block(std::size_t position, Block* block) {
    std::size_t start = position & ~kMask;
    // Only senders early in their block try to move block_tail_ along, so
    // the many senders of one block do not all fight over it.
    bool try_updating_tail = (start - block->start) / kBlockCap > (position & kMask);
    for (;;) {
      Block* next = block->next.load(std::memory_order_acquire);
      if (next == nullptr) next = grow(block);
      if (try_updating_tail && block->is_final()) {
        Block* expected = block;
        if (block_tail_.compare_exchange_strong(expected, next, std::memory_order_seq_cst, std::memory_order_relaxed)) {
          block->observed_tail = tail_.load(std::memory_order_seq_cst) >> 1;  // seq_cst: see push
          block->released.store(true, std::memory_order_release);
        } else {
          try_updating_tail = false;
        }
      }
      block = next;
      if (block->start == start) return block;
    }
  }

  // The block holding position index_ (the receiver may have to grow the
  // list to reach it, so it can park on the slot); on the way into a new
  // block, it reuses the blocks it has left behind.
  Block* head_block() {
    if (head_->start == (index_ & ~kMask)) [[likely]]
      return head_;
    return advance_head();
  }

  // Once per block, out of line. Blocks left behind are reclaimed here
  // only: one not yet reusable is tried again at the next block.
  [[gnu::noinline]] Block* advance_head() {
    std::size_t start = index_ & ~kMask;
    while (head_->start != start) {
      Block* next = head_->next.load(std::memory_order_acquire);
      if (next == nullptr) next = grow(head_);
      head_ = next;
    }
    reclaim_blocks();
    return head_;
  }

  void reclaim_blocks() {
    while (free_head_ != head_) {
      if (!free_head_->released.load(std::memory_order_acquire)) return;
      if (index_ < free_head_->observed_tail) return;  // a sender may still walk through it
      Block* block = free_head_;
      free_head_ = block->next.load(std::memory_order_acquire);
      if (block == last_reused_) last_reused_ = nullptr;
      reuse(block);
    }
  }

  // Resets a block no sender can reach any more and appends it at the end
  // of the list, to be written again; frees it instead when kMaxSpare
  // blocks already wait beyond the senders' tail block. The end is found
  // from the block this receiver appended last (only the receiver reuses
  // or frees blocks, so that one is alive), not by walking the list.
  void reuse(Block* block) {
    block->next.store(nullptr, std::memory_order_relaxed);
    block->released.store(false, std::memory_order_relaxed);
    block->observed_tail = 0;
    block->bits.store(0, std::memory_order_relaxed);  // reset
    Block* tail = block_tail_.load(std::memory_order_acquire);
    Block* at = last_reused_ != nullptr && last_reused_->start > tail->start ? last_reused_ : tail;
    for (std::size_t walked = 0; (at->start - tail->start) / kBlockCap < kMaxSpare && walked < kMaxSpare; ++walked) {
      Block* after = at->next.load(std::memory_order_acquire);
      if (after == nullptr) {
        block->start = at->start + kBlockCap;
        if (at->next.compare_exchange_strong(after, block, std::memory_order_acq_rel, std::memory_order_acquire)) {
          last_reused_ = block;
          return;
        }
      }
      at = after;
    }
    std::unique_ptr<Block> drop(block);
  }

  // Shared by senders.
  alignas(64) Atomic<Word> tail_{0};
  Atomic<Block*> block_tail_;
  Atomic<std::size_t> closed_at_{SIZE_MAX};  // the position the queue closed at
  // The receiver's own.
  alignas(64) Block* head_;
  Block* free_head_;
  Block* last_reused_ = nullptr;  // the block reuse() appended last, while it is in the list
  std::size_t index_ = 0;
};

}  // namespace pollux::detail
