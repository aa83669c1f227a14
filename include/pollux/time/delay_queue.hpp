// DelayQueue<T>: values that come out once their deadline passed, in
// deadline order (tokio-util's DelayQueue). insert gives a Key by which a
// value is removed, or its deadline reset, before it expires. The queue is
// a Stream of Expired<T>; it keeps one Sleep, armed for the earliest
// deadline, so a queue of any size holds one timer, and an insert or reset
// that makes an earlier deadline wakes the task polling it to re-arm.
// Costs: insert, remove and reset O(log n) (a binary heap whose stale
// entries, left by remove and reset, are skipped when they surface and
// swept when they outnumber the live ones); a slot per value, reused.
// Polling it on a thread without a driver throws NoRuntime (rule 8).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/waker.hpp"
#include "pollux/time/instant.hpp"
#include "pollux/time/sleep.hpp"

namespace pollux {

/// Names a value in a DelayQueue until it expires or is removed; a key of
/// a value that left is refused (its slot's generation moved on).
struct DelayKey {
  std::uint32_t index = 0;       ///< the value's slot
  std::uint32_t generation = 0;  ///< the slot's use this key belongs to
  /// Two keys are equal when they name the same slot's same use.
  friend bool operator==(const DelayKey&, const DelayKey&) = default;
};

/// A value that left a DelayQueue: expired, or removed.
template <class T>
struct Expired {
  T value;           ///< the value
  Instant deadline;  ///< when it was due
  DelayKey key;      ///< the key it had (no longer valid)
};

/// Values that come out, as a Stream of Expired<T>, once their deadlines pass.
template <class T>
class DelayQueue {
 public:
  using Item = Expired<T>;
  /// Ends while empty and yields again after an insert (a RefillableStream).
  static constexpr bool refillable = true;

  DelayQueue() = default;
  /// Takes over `other`'s values (its timer is made again at the next poll).
  DelayQueue(DelayQueue&&) noexcept = default;
  DelayQueue& operator=(DelayQueue&&) = delete;

  /// Adds `value`, due at `deadline` (one in the past comes out at the next poll).
  DelayKey insert_at(T value, Instant deadline) {
    std::uint32_t index;
    if (free_.empty()) {
      index = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back();
    } else {
      index = free_.back();
      free_.pop_back();
    }
    Slot& slot = slots_[index];
    slot.value.emplace(std::move(value));
    slot.deadline = deadline;
    ++live_;
    DelayKey key{index, slot.generation};
    schedule(key, deadline);
    return key;
  }
  /// Adds `value`, due `delay` from now.
  DelayKey insert(T value, Duration delay) { return insert_at(std::move(value), now() + delay); }

  /// Takes out the value of `key` before it expires; nullopt if the key's
  /// value already left.
  std::optional<Expired<T>> try_remove(const DelayKey& key) {
    Slot* slot = find(key);
    if (slot == nullptr) return std::nullopt;
    return take(key.index);  // its heap entry goes stale: skipped or swept
  }
  /// try_remove for a key that must be live: std::out_of_range otherwise.
  Expired<T> remove(const DelayKey& key) {
    std::optional<Expired<T>> removed = try_remove(key);
    if (!removed) throw std::out_of_range("pollux::DelayQueue::remove: the key's value already left the queue");
    return std::move(*removed);
  }

  /// Moves the deadline of `key`'s value to `deadline`. std::out_of_range
  /// if the key's value already left.
  void reset_at(const DelayKey& key, Instant deadline) {
    Slot* slot = find(key);
    if (slot == nullptr) throw std::out_of_range("pollux::DelayQueue::reset: the key's value already left the queue");
    slot->deadline = deadline;
    schedule(key, deadline);  // the old heap entry goes stale
  }
  /// Moves the deadline of `key`'s value to `delay` from now.
  void reset(const DelayKey& key, Duration delay) { reset_at(key, now() + delay); }

  /// The deadline of `key`'s value, or nullopt if it left.
  std::optional<Instant> deadline(const DelayKey& key) const {
    const Slot* slot = const_cast<DelayQueue*>(this)->find(key);
    return slot != nullptr ? std::optional<Instant>(slot->deadline) : std::nullopt;
  }
  /// Whether `key`'s value is still in the queue.
  bool contains(const DelayKey& key) const { return deadline(key).has_value(); }
  /// The key of the value due first, or nullopt when empty.
  std::optional<DelayKey> peek() {
    drop_stale();
    if (heap_.empty()) return std::nullopt;
    return DelayKey{heap_.front().index, heap_.front().generation};
  }

  /// The number of values in the queue.
  std::size_t size() const noexcept { return live_; }
  /// True when size() is 0.
  bool empty() const noexcept { return live_ == 0; }
  /// Drops every value.
  void clear() {
    for (std::uint32_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].value) (void)take(i);
    }
    heap_.clear();
  }

  /// Stream: the next value whose deadline passed (earliest first);
  /// Pending until one does, with one timer armed for the earliest; the
  /// end while the queue is empty (an insert wakes the poller).
  Poll<std::optional<Expired<T>>> poll_next(Context& cx) {
    waker_ = cx.waker();
    for (;;) {
      drop_stale();
      if (heap_.empty()) return ready(std::optional<Expired<T>>());
      Entry first = heap_.front();
      if (first.deadline <= now()) {
        std::pop_heap(heap_.begin(), heap_.end(), Later{});
        heap_.pop_back();
        return ready(std::optional<Expired<T>>(take(first.index)));
      }
      if (!timer_) timer_ = std::make_unique<Sleep>(first.deadline);
      if (timer_->is_elapsed() || timer_->deadline() != first.deadline) timer_->reset(first.deadline);
      if (timer_->poll(cx).is_pending()) return pending;
      // The timer fired: the first value is due now (the clock says so).
    }
  }

 private:
  struct Slot {
    std::optional<T> value;
    Instant deadline{};
    std::uint32_t generation = 0;
  };
  struct Entry {
    Instant deadline;
    std::uint32_t index;
    std::uint32_t generation;
  };
  // std::push_heap keeps the greatest first: the latest deadline is the least.
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const noexcept { return a.deadline > b.deadline; }
  };

  Slot* find(const DelayKey& key) {
    if (key.index >= slots_.size()) return nullptr;
    Slot& slot = slots_[key.index];
    return slot.value && slot.generation == key.generation ? &slot : nullptr;
  }

  bool stale(const Entry& entry) const noexcept {
    const Slot& slot = slots_[entry.index];
    return !slot.value || slot.generation != entry.generation || slot.deadline != entry.deadline;
  }

  void drop_stale() {
    while (!heap_.empty() && stale(heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), Later{});
      heap_.pop_back();
    }
  }

  void schedule(const DelayKey& key, Instant deadline) {
    bool earliest = heap_.empty() || deadline < heap_.front().deadline;
    heap_.push_back(Entry{deadline, key.index, key.generation});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
    if (heap_.size() > 2 * live_ + 16) sweep();
    // The poller's timer is for a later deadline (or it saw an empty queue).
    if (earliest) waker_.wake_by_ref();
  }

  // Rebuilds the heap from its live entries: stale ones never outnumber
  // the live by more than 2 to 1, so the heap stays O(n).
  void sweep() {
    std::erase_if(heap_, [this](const Entry& entry) { return stale(entry); });
    std::make_heap(heap_.begin(), heap_.end(), Later{});
  }

  Expired<T> take(std::uint32_t index) {
    Slot& slot = slots_[index];
    Expired<T> out{std::move(*slot.value), slot.deadline, DelayKey{index, slot.generation}};
    slot.value.reset();
    ++slot.generation;  // every key of this use is refused from now on
    free_.push_back(index);
    --live_;
    return out;
  }

  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_;
  std::vector<Entry> heap_;
  std::size_t live_ = 0;
  std::unique_ptr<Sleep> timer_;  // on the heap: a Sleep stays put once armed, the queue may move
  Waker waker_;                   // the last poller's: an earlier deadline wakes it
};

}  // namespace pollux
