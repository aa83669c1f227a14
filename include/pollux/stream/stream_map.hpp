// StreamMap<K, S>: a keyed set of streams of one type, itself a stream of
// (key, item) pairs (tokio-stream's StreamMap): subscribe a connection or a
// topic under a key, remove it by key, and read whichever has an item. A
// stream that ends is removed (its end is not yielded); the map's stream
// is Pending, not ended, while it is empty, so it can be filled later: a
// poll of an empty map stores the waker, and insert() wakes it.
// Fair: each poll_next starts at a different stream (rotating), so a busy
// stream cannot starve the others. A poll costs O(streams), as tokio's.
// Cancellation: next() on it loses nothing.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "pollux/core/waker.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {

template <class K, Stream S>
class StreamMap {
 public:
  using Item = std::pair<K, item_t<S>>;

  /// Adds `stream` under `key`. A stream already under that key is replaced
  /// and returned.
  std::optional<S> insert(K key, S stream) {
    for (auto& entry : entries_) {
      if (entry.first == key) return std::exchange(entry.second, std::move(stream));
    }
    entries_.emplace_back(std::move(key), std::move(stream));
    if (waiting_) waiting_->wake_by_ref();  // an empty map was polled
    return std::nullopt;
  }

  /// Removes the stream under `key` and returns it (nullopt: none).
  std::optional<S> remove(const K& key) {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].first == key) return erase(i);
    }
    return std::nullopt;
  }

  bool contains(const K& key) const {
    for (auto& entry : entries_) {
      if (entry.first == key) return true;
    }
    return false;
  }

  /// The number of streams in the map.
  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }

  /// Calls fn(const K&, S&) for every stream.
  template <class Fn>
  void for_each(Fn&& fn) {
    for (auto& [key, stream] : entries_) fn(std::as_const(key), stream);
  }

  Poll<std::optional<Item>> poll_next(Context& cx) {
    if (entries_.empty()) return wait_for_insert(cx);
    waiting_.reset();
    std::size_t n = entries_.size();
    std::size_t i = start_++ % n;
    for (std::size_t visited = 0; visited < n; ++visited) {
      auto item = entries_[i].second.poll_next(cx);
      if (item.is_ready()) {
        if (item.value()) return Poll<std::optional<Item>>(std::in_place, std::in_place, entries_[i].first, std::move(*item.value()));
        erase(i);  // ended: the last entry moved into slot i, look there next
        --n;
        if (n == 0) return wait_for_insert(cx);
        if (i == n) i = 0;
        continue;
      }
      if (++i == n) i = 0;
    }
    return pending;
  }

 private:
  Pending wait_for_insert(Context& cx) {
    if (waiting_) *waiting_ = cx.waker();  // no clone if it is the same task
    else waiting_.emplace(cx.waker());
    return pending;
  }

  std::optional<S> erase(std::size_t i) {
    std::optional<S> removed(std::move(entries_[i].second));
    if (i + 1 != entries_.size()) entries_[i] = std::move(entries_.back());
    entries_.pop_back();
    return removed;
  }

  std::vector<std::pair<K, S>> entries_;
  std::optional<Waker> waiting_;  // who polled the map while it was empty
  std::size_t start_ = 0;
};

}  // namespace pollux
