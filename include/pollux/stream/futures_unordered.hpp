// FuturesUnordered<F>: a growing set of futures, polled together, that
// yields each output as soon as its future is Ready (a Stream; it ends when
// the set is empty). O(1) per wake-up: every future is polled through a
// waker of its own, which queues exactly that future; a poll_next visits
// only the queued ones. One allocation per push (the future and its node, from the
// thread's slab),
// none per wake or poll; with set_spare_nodes(n), up to n nodes of finished
// futures are kept and reused by later pushes, so a set that stays under
// that size allocates nothing once warm (buffer_unordered relies on it). Each yielded output spends the coop budget, so
// a set full of ready futures cannot starve its thread.
//
// Lifetimes (rule 6): a node is freed by its last reference: the set's,
// or a waker clone's. A finished node is marked queued for good, so late
// wakes never queue it again, and the set's reference covers the time it
// may still sit in the queue.
// Cancellation: destroying the set destroys every future in it.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <memory>
#include <optional>
#include <utility>

#include "pollux/core/atomic_waker.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/woken_queue.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/stream/stream.hpp"
#include "pollux/core/slab.hpp"
#include "pollux/core/coop.hpp"

namespace pollux {

namespace detail {

struct ReadyQueue;

struct UnorderedNode {
  pollux::detail::Atomic<std::size_t> refs{1};  // the set's
  pollux::detail::Atomic<bool> queued{true};    // a new node is queued: the first poll visits it
  pollux::detail::Atomic<UnorderedNode*> next_ready{nullptr};
  Arc<ReadyQueue> queue;
  UnorderedNode* prev_all = nullptr;  // the set's list of live nodes
  UnorderedNode* next_all = nullptr;
  void (*free)(UnorderedNode*) = nullptr;

  void acquire() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) free(this);
  }

  // Queues the node unless it is queued already (or finished for good).
  void wake_by_ref() noexcept;

  static UnorderedNode* of(const void* data) noexcept { return static_cast<UnorderedNode*>(const_cast<void*>(data)); }
  static RawWaker clone_waker(const void* data) noexcept;
  static void wake_waker(const void* data) noexcept {
    of(data)->wake_by_ref();
    of(data)->release();
  }
  static void wake_waker_by_ref(const void* data) noexcept { of(data)->wake_by_ref(); }
  static void drop_waker(const void* data) noexcept { of(data)->release(); }
  static const RawWakerVTable vtable;
};

inline constexpr RawWakerVTable UnorderedNode::vtable{&UnorderedNode::clone_waker, &UnorderedNode::wake_waker,
                                                      &UnorderedNode::wake_waker_by_ref, &UnorderedNode::drop_waker};

/// Shared by the set and every node: the queue of woken nodes, and the
/// set's own waker.
struct ReadyQueue : RefCounted<ReadyQueue> {
  WokenQueue<UnorderedNode, &UnorderedNode::queued, &UnorderedNode::next_ready> woken;

  // The set is gone: closes the queue and gives up the reference it holds
  // on each node still on it (the set's, which a finished node that was
  // queued left to the queue: see FuturesUnordered::finish).
  void close() noexcept {
    WokenList<UnorderedNode, &UnorderedNode::next_ready> orphans;
    woken.close_into(orphans);
    while (UnorderedNode* node = orphans.pop()) node->release();
  }
};

// A wake that races the set's destruction: its push either lands before
// the queue closes (and close() releases the node) or fails after it, and
// then this wake gives up the set's reference itself. The caller holds a
// reference of its own, so the node outlives the call.
inline void UnorderedNode::wake_by_ref() noexcept {
  if (!queue->woken.push(this)) release();
}

inline RawWaker UnorderedNode::clone_waker(const void* data) noexcept {
  of(data)->acquire();
  return RawWaker{data, &vtable};
}

/// A set's list of its live nodes (through prev_all and next_all) and how
/// many there are: what FuturesUnordered and StreamMap keep.
class LiveNodes {
 public:
  LiveNodes() = default;
  LiveNodes(LiveNodes&& other) noexcept
      : head_(std::exchange(other.head_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  LiveNodes& operator=(LiveNodes&&) = delete;

  UnorderedNode* head() const noexcept { return head_; }
  std::size_t size() const noexcept { return size_; }

  void link(UnorderedNode* node) noexcept {
    node->next_all = head_;
    if (head_) head_->prev_all = node;
    head_ = node;
    ++size_;
  }

  void unlink(UnorderedNode* node) noexcept {
    if (node->prev_all)
      node->prev_all->next_all = node->next_all;
    else
      head_ = node->next_all;
    if (node->next_all) node->next_all->prev_all = node->prev_all;
    node->prev_all = node->next_all = nullptr;
    --size_;
  }

 private:
  UnorderedNode* head_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace detail

/// A growing set of futures, polled together, that yields each output as soon as its future is
/// Ready (a Stream;
template <Future F>
class [[nodiscard("streams do nothing unless polled")]] FuturesUnordered {
  using Node = detail::UnorderedNode;

  struct FutureNode : Node {
    template <class... Args>
    explicit FutureNode(Args&&... args) : future(std::forward<Args>(args)...) {}
    std::optional<F> future;  // empty once it finished or the set let it go
  };

 public:
  using Item = unit_if_void_t<output_t<F>>;
  /// Ends while empty and yields again after an insert (a RefillableStream).
  static constexpr bool refillable = true;

  FuturesUnordered() : queue_(make_arc<detail::ReadyQueue>()) {}
  FuturesUnordered(FuturesUnordered && other) noexcept
      : queue_(std::move(other.queue_)),
        all_(std::move(other.all_)),
        local_(std::move(other.local_)),
        spare_(std::exchange(other.spare_, nullptr)),
        spare_count_(std::exchange(other.spare_count_, 0)),
        max_spare_(other.max_spare_) {}
  FuturesUnordered& operator=(FuturesUnordered&&) = delete;
  ~FuturesUnordered() {
    clear();
    if (queue_) queue_->close();
  }

  /// Adds a future; it is polled on the next poll_next.
  void push(F future) {
    Node* raw;
    if (spare_ != nullptr) {
      // A spare node: only the set holds it (see recycle), it is marked
      // queued, and its future slot is empty.
      auto* node = static_cast<FutureNode*>(spare_);
      spare_ = node->next_all;
      --spare_count_;
      node->future.emplace(std::move(future));
      raw = node;
    } else {
      // From the thread's slab, as tasks are: a node freed on another
      // thread (its last waker dropped there) goes back to this one's.
      FutureNode* node = detail::slab_new<FutureNode>(std::move(future));
      node->queue = queue_;
      node->free = [](Node* n) { detail::slab_delete(static_cast<FutureNode*>(n)); };
      raw = node;
    }
    all_.link(raw);
    enqueue_local(raw);
  }

  /// Keeps up to `n` nodes of finished futures for later pushes (none by
  /// default): memory for speed, for a set whose size stays around n.
  void set_spare_nodes(std::size_t n) noexcept {
    max_spare_ = n;
    while (spare_count_ > max_spare_) free_one_spare();
  }

  /// The number of futures in the set.
  std::size_t size() const noexcept { return all_.size(); }
  /// True when no future is left.
  bool empty() const noexcept { return all_.size() == 0; }

  /// Calls fn(F&) for every future still in the set (JoinSet aborts its
  /// tasks this way).
  template <class Fn>
  void for_each(Fn && fn) {
    for (Node* n = all_.head(); n != nullptr; n = n->next_all) fn(*static_cast<FutureNode*>(n)->future);
  }

  /// The next output of a future that was woken and finished; the end while the set is empty.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (all_.size() == 0) return Poll<std::optional<Item>>(std::in_place, std::nullopt);
    if (!coop::poll_proceed(cx)) return pending;
    queue_->woken.parent().register_waker(cx.waker());
    queue_->woken.drain_into(local_);
    // Visit what was queued when we started; wakes from now on queue for
    // the next poll (and woke us), so a future that keeps waking itself
    // cannot keep us here.
    while (Node* node = local_.pop()) {
      auto* entry = static_cast<FutureNode*>(node);
      if (!entry->future) {  // finished; its last stay in the queue ends here
        recycle(node);
        continue;
      }
      node->queued.store(false, std::memory_order_release);  // wakes from now on queue it again
      WakerRef waker(RawWaker{node, &Node::vtable});
      Context child_cx(waker);
      // A future that throws is finished too: it leaves the set, which stays
      // usable, and the exception goes to the caller (rule 7).
      auto result = [&] {
        try {
          return poll_unit(*entry->future, child_cx);
        } catch (...) {
          finish(entry);
          throw;
        }
      }();
      if (result.is_ready()) {
        finish(entry);
        return Poll<std::optional<Item>>(std::in_place, std::move(result).value());
      }
      if (!local_.empty() && coop::remaining() == 0) {
        // The budget is spent: the rest would only answer Pending. They stay
        // on the local list, and we come back for them.
        cx.waker().wake_by_ref();
        return pending;
      }
    }
    return pending;
  }

  /// Destroys every future in the set.
  void clear() noexcept {
    while (all_.head() != nullptr) finish(static_cast<FutureNode*>(all_.head()));
    while (Node* node = local_.pop()) {  // nodes drained but not yet visited
      if (!static_cast<FutureNode*>(node)->future) node->release();
    }
    if (queue_) {
      queue_->woken.drain_into(local_);
      while (Node* node = local_.pop()) node->release();  // all finished by now
      queue_->woken.parent().take();
    }
    while (spare_ != nullptr) free_one_spare();
  }

 private:
  // A new node goes to the end of the local list (it starts out queued).
  void enqueue_local(Node * node) noexcept {
    node->next_ready.store(nullptr, std::memory_order_relaxed);
    local_.append(node, node);
  }

  // The future is done (or the set lets it go): destroy it, leave the set,
  // and give up the set's reference, unless the node sits in a queue, which
  // then owns that reference until it is drained.
  void finish(FutureNode * node) noexcept {
    node->future.reset();
    all_.unlink(node);
    if (!node->queued.exchange(true, std::memory_order_acq_rel)) recycle(node);
  }

  // The set lets go of a finished node (out of every list, marked queued):
  // kept as a spare if no waker refers to it any more, else released. With
  // refs == 1 the only reference is the set's, so no waker exists that
  // could clone or wake it: the node is the set's alone.
  void recycle(Node * node) noexcept {
    if (spare_count_ < max_spare_ && node->refs.load(std::memory_order_acquire) == 1) {
      node->next_all = spare_;
      spare_ = node;
      ++spare_count_;
      return;
    }
    node->release();
  }

  void free_one_spare() noexcept {
    Node* node = spare_;
    spare_ = node->next_all;
    --spare_count_;
    node->release();
  }

  Arc<detail::ReadyQueue> queue_;
  detail::LiveNodes all_;
  detail::WokenList<Node, &Node::next_ready> local_;  // drained from the queue, not yet visited
  Node* spare_ = nullptr;                             // finished nodes kept for reuse, through next_all
  std::size_t spare_count_ = 0;
  std::size_t max_spare_ = 0;
};

}  // namespace pollux
