// StreamMap<K, S>: a keyed set of streams of one type, itself a stream of
// (key, item) pairs (tokio-stream's StreamMap): subscribe a connection or a
// topic under a key, remove it by key, and read whichever has an item. A
// stream that ends is removed (its end is not yielded); the map's stream
// ends while the map is empty and yields again after an insert (a
// RefillableStream, as tokio-stream's and futures' collections are), and
// insert() wakes whoever polled it while its streams were all Pending.
// O(1) per wake-up, at any size: each stream is polled through a waker of
// its own (FuturesUnordered's node and queue), which queues exactly that
// stream, and a poll_next visits only the queued ones. A stream that gave
// an item goes to the back of the queue, so a busy stream cannot starve the
// others. One allocation per insert (the node, from the thread's slab), so
// a stream never moves once polled (rule 4); removing or replacing a
// stream destroys it, which cancels it (rule 5). insert, remove and
// contains look the key up in O(streams).
// Cancellation: next() on it loses nothing.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <optional>
#include <utility>

#include "pollux/core/coop.hpp"
#include "pollux/core/detail/woken_queue.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/core/waker.hpp"
#include "pollux/stream/futures_unordered.hpp"
#include "pollux/stream/stream.hpp"
#include "pollux/core/slab.hpp"

namespace pollux {

/// A keyed set of streams of one type, itself a stream of (key, item) pairs (tokio-stream's
/// StreamMap): subscribe a connection or a topic under a key, remove it by key, and read whichever
/// has an item.
template <class K, Stream S>
class [[nodiscard("streams do nothing unless polled")]] StreamMap {
  using Node = detail::UnorderedNode;

  struct Entry : Node {
    Entry(K k, S s) : key(std::move(k)), stream(std::in_place, std::move(s)) {}
    K key;
    std::optional<S> stream;  // empty once it ended or was removed
  };

 public:
  /// A stream's key, and the item it gave.
  using Item = std::pair<K, item_t<S>>;
  /// Ends while empty and yields again after an insert (a RefillableStream).
  static constexpr bool refillable = true;

  StreamMap() : queue_(make_arc<detail::ReadyQueue>()) {}
  StreamMap(StreamMap && other) noexcept
      : queue_(std::move(other.queue_)), all_(std::move(other.all_)), local_(std::move(other.local_)) {}
  StreamMap& operator=(StreamMap&&) = delete;
  ~StreamMap() {
    clear();
    if (queue_) queue_->close();  // a wake still in flight releases its node itself
  }

  /// Adds `stream` under `key`. A stream already under that key is
  /// destroyed and replaced; returns whether there was one.
  bool insert(K key, S stream) {
    bool replaced = remove(key);
    Entry* entry = detail::slab_new<Entry>(std::move(key), std::move(stream));
    entry->queue = queue_;
    entry->free = [](Node* n) { detail::slab_delete(static_cast<Entry*>(n)); };
    all_.link(entry);
    entry->next_ready.store(nullptr, std::memory_order_relaxed);
    local_.append(entry, entry);           // a new node starts out queued
    queue_->woken.parent().wake_by_ref();  // the new stream has to be polled
    return replaced;
  }

  /// Destroys the stream under `key`; returns whether there was one.
  bool remove(const K& key) {
    Entry* entry = find(key);
    if (entry == nullptr) return false;
    finish(entry);
    return true;
  }

  /// Whether a stream is under `key`.
  bool contains(const K& key) const { return find(key) != nullptr; }

  /// The number of streams in the map.
  std::size_t size() const noexcept { return all_.size(); }
  /// True when no stream is left.
  bool empty() const noexcept { return all_.size() == 0; }

  /// Calls fn(const K&, S&) for every stream.
  template <class Fn>
  void for_each(Fn && fn) {
    for (Node* n = all_.head(); n != nullptr; n = n->next_all) {
      auto* entry = static_cast<Entry*>(n);
      fn(std::as_const(entry->key), *entry->stream);
    }
  }

  /// The next item of whichever queued stream has one: Ready with it and
  /// its key, the end while the map is empty, or Pending with the waker of
  /// `cx` kept.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (all_.size() != 0) {
      queue_->woken.parent().register_waker(cx.waker());  // an insert or a stream's wake reaches us
      if (!coop::poll_proceed(cx)) return pending;
    }  // else only removed streams' nodes can be queued: they are released below
    queue_->woken.drain_into(local_);
    while (Node* node = local_.pop()) {
      auto* entry = static_cast<Entry*>(node);
      if (!entry->stream) {  // removed while queued; its last stay in the queue ends here
        node->release();
        continue;
      }
      node->queued.store(false, std::memory_order_release);  // wakes from now on queue it again
      WakerRef waker(RawWaker{node, &Node::vtable});
      Context child_cx(waker);
      auto item = [&] {
        try {
          return entry->stream->poll_next(child_cx);
        } catch (...) {
          finish(entry);  // a stream that throws leaves the map; the map stays usable (rule 7)
          throw;
        }
      }();
      if (item.is_pending()) continue;
      if (!item.value()) {  // ended: it leaves the map, its end is not an item
        finish(entry);
        continue;
      }
      Item found(entry->key, std::move(*item.value()));
      // It may have more: to the back of the queue, behind the others.
      if (!node->queued.exchange(true, std::memory_order_acq_rel)) {
        node->next_ready.store(nullptr, std::memory_order_relaxed);
        local_.append(node, node);
      }
      return Poll<std::optional<Item>>(std::in_place, std::move(found));
    }
    if (all_.size() == 0) return stream_end;  // the last streams ended in this poll
    return pending;
  }

 private:
  Entry* find(const K& key) const {
    for (Node* n = all_.head(); n != nullptr; n = n->next_all) {
      auto* entry = static_cast<Entry*>(n);
      if (entry->key == key) return entry;
    }
    return nullptr;
  }

  // The stream ended or is removed: destroy it, leave the map, and give up
  // the map's reference, unless the node sits in a queue, which then owns
  // that reference until it is drained.
  void finish(Entry * entry) noexcept {
    entry->stream.reset();
    all_.unlink(entry);
    if (!entry->queued.exchange(true, std::memory_order_acq_rel)) entry->release();
  }

  void clear() noexcept {
    while (all_.head() != nullptr) finish(static_cast<Entry*>(all_.head()));
    while (Node* node = local_.pop()) node->release();  // all finished by now
    if (queue_) {
      queue_->woken.drain_into(local_);
      while (Node* node = local_.pop()) node->release();
      queue_->woken.parent().take();
    }
  }

  Arc<detail::ReadyQueue> queue_;
  detail::LiveNodes all_;
  detail::WokenList<Node, &Node::next_ready> local_;  // drained from the queue, not yet visited
};

}  // namespace pollux
