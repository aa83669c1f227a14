// StreamMap<K, S>: a keyed set of streams of one type, itself a stream of
// (key, item) pairs (tokio-stream's StreamMap): subscribe a connection or a
// topic under a key, remove it by key, and read whichever has an item. A
// stream that ends is removed (its end is not yielded); the map's stream
// is Pending, not ended, while it is empty, so it can be filled later. The
// map keeps the waker of its last poll, and insert() wakes it: a stream
// added from another future is polled without waiting for the others.
// Fair: each poll_next starts at a different stream (rotating), so a busy
// stream cannot starve the others. A poll costs O(streams), as tokio's.
// Each stream lives in an allocation of its own (one per insert), so it
// never moves once polled (rule 4); removing or replacing a stream
// destroys it, which cancels it (rule 5).
// Cancellation: next() on it loses nothing.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "pollux/core/waker.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {

/// A keyed set of streams of one type, itself a stream of (key, item) pairs (tokio-stream's
/// StreamMap): subscribe a connection or a topic under a key, remove it by key, and read whichever
/// has an item.
template <class K, Stream S>
class [[nodiscard("streams do nothing unless polled")]] StreamMap {
 public:
  /// What each item of the stream is.
  using Item = std::pair<K, item_t<S>>;

  /// Adds `stream` under `key`. A stream already under that key is
  /// destroyed and replaced; returns whether there was one.
  bool insert(K key, S stream) {
    auto entry = std::make_unique<Entry>(std::move(key), std::move(stream));
    for (auto& old : entries_) {
      if (old->key == entry->key) {
        old = std::move(entry);
        if (waiting_) waiting_->wake_by_ref();
        return true;
      }
    }
    entries_.push_back(std::move(entry));
    if (waiting_) waiting_->wake_by_ref();  // the new stream has to be polled
    return false;
  }

  /// Destroys the stream under `key`; returns whether there was one.
  bool remove(const K& key) {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i]->key == key) {
        erase(i);
        return true;
      }
    }
    return false;
  }

  /// Whether a stream is under `key`.
  bool contains(const K& key) const {
    for (auto& entry : entries_) {
      if (entry->key == key) return true;
    }
    return false;
  }

  /// The number of streams in the map.
  std::size_t size() const noexcept { return entries_.size(); }
  /// True when no stream is left.
  bool empty() const noexcept { return entries_.empty(); }

  /// Calls fn(const K&, S&) for every stream.
  template <class Fn>
  void for_each(Fn&& fn) {
    for (auto& entry : entries_) fn(std::as_const(entry->key), entry->stream);
  }

  /// Polls for the next item (the Stream concept): Ready with it, Ready with nullopt once the
  /// stream ended, or Pending with the waker of `cx` kept for the wake-up.
  Poll<std::optional<Item>> poll_next(Context& cx) {
    // The waker is kept, so that an insert between polls wakes whoever
    // waits on the map (the new stream was never polled).
    if (waiting_) *waiting_ = cx.waker();  // no clone if it is the same task
    else waiting_.emplace(cx.waker());
    const std::size_t n = entries_.size();
    if (n == 0) return pending;
    std::optional<Item> found;
    std::size_t i = start_++ % n;
    for (std::size_t visited = 0; visited < n && !found; ++visited, i = i + 1 == n ? 0 : i + 1) {
      auto item = entries_[i]->stream.poll_next(cx);
      if (item.is_pending()) continue;
      if (item.value()) found.emplace(entries_[i]->key, std::move(*item.value()));
      else entries_[i]->ended = true;  // erased below, once the visits are done
    }
    sweep_ended();
    if (found) return ready(std::move(*found));
    return pending;
  }

 private:
  // Destroys the streams that ended.
  void sweep_ended() {
    for (std::size_t i = 0; i < entries_.size();) {
      if (entries_[i]->ended) erase(i);
      else ++i;
    }
  }

  // Destroys entry i; the last entry takes its place.
  void erase(std::size_t i) {
    if (i + 1 != entries_.size()) entries_[i] = std::move(entries_.back());
    entries_.pop_back();
  }

  struct Entry {
    Entry(K k, S s) : key(std::move(k)), stream(std::move(s)) {}
    K key;
    S stream;
    bool ended = false;
  };

  std::vector<std::unique_ptr<Entry>> entries_;
  std::optional<Waker> waiting_;  // who polled the map last
  std::size_t start_ = 0;
};

}  // namespace pollux
