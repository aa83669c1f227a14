// IntrusiveList<T, &T::hook>: a doubly linked list whose links live inside
// the nodes, so linking allocates nothing. Every wait list (Notify, the
// semaphore, Barrier, broadcast and watch receivers, cancellation
// children), the timer wheel's slots and the executors' task registries
// are one of these. It relies on rule 5: a node's owner unlinks it before
// the node dies (a waiting future's destructor), since the list never owns,
// frees or touches a node it was not handed.
//
// Linking writes both of the node's links, and only a linked node's links
// are read, so a node never linked, or unlinked, may hold anything (its
// links are left unset in a release build).
//
// Invariants, which every operation keeps and the debug build checks:
//   - empty  <=>  head_ == nullptr  <=>  tail_ == nullptr;
//   - head_->prev == nullptr and tail_->next == nullptr;
//   - for every linked node n: n.next is null or n.next->prev == &n (and
//     the same backwards), so erase is O(1) given only the node;
//   - a node is in at most one list through a given hook; in a debug
//     build, a node in none has both links null.
// The list is not thread-safe: its owner's lock guards it, and every node's
// hook with it (tokio's util/linked_list.rs keeps the same rules).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cassert>
#include <cstddef>
#include <iterator>
#include <utility>

namespace pollux::detail {

/// The links a node embeds, one per list it can be in at a time. They are
/// read only while the node is linked, so a release build leaves them
/// unset until then (as Boost's normal_link hooks do: a waiting future
/// built on every lock() pays no stores for a list it rarely joins); a
/// debug build keeps them null while unlinked, for the checks.
template <class T>
struct ListHook {
#ifdef NDEBUG
  T* prev;
  T* next;
#else
  T* prev = nullptr;
  T* next = nullptr;
#endif
};

/// A list of nodes of type T, linked through the member `Hook` (a
/// ListHook<T>). Owns no node: destroying the list leaves its nodes as they
/// are, so its owner empties it first (or knows the nodes die with it).
template <class T, ListHook<T> T::*Hook>
class IntrusiveList {
 public:
  IntrusiveList() noexcept = default;
  IntrusiveList(IntrusiveList&& other) noexcept
      : head_(std::exchange(other.head_, nullptr)), tail_(std::exchange(other.tail_, nullptr)) {}
  IntrusiveList& operator=(IntrusiveList&& other) noexcept {
    assert(empty() && "IntrusiveList: assigned over linked nodes, which would stay linked to nothing");
    head_ = std::exchange(other.head_, nullptr);
    tail_ = std::exchange(other.tail_, nullptr);
    return *this;
  }
  IntrusiveList(const IntrusiveList&) = delete;
  IntrusiveList& operator=(const IntrusiveList&) = delete;

  /// No node is linked.
  bool empty() const noexcept { return head_ == nullptr; }
  /// The first node. Precondition: not empty.
  T& front() const noexcept {
    assert(head_ != nullptr && "IntrusiveList::front on an empty list");
    return *head_;
  }
  /// The last node. Precondition: not empty.
  T& back() const noexcept {
    assert(tail_ != nullptr && "IntrusiveList::back on an empty list");
    return *tail_;
  }

  /// Links `node` last. Precondition: it is in no list through this hook.
  void push_back(T& node) noexcept {
    ListHook<T>& hook = node.*Hook;
    assert(!is_linked(node) && "IntrusiveList::push_back of a node already linked");
    hook.prev = tail_;
    hook.next = nullptr;  // both links are written: a release build leaves an unlinked node's unset
    if (tail_ != nullptr) {
      (tail_->*Hook).next = &node;
    } else {
      head_ = &node;
    }
    tail_ = &node;
  }

  /// Links `node` first. Precondition: it is in no list through this hook.
  void push_front(T& node) noexcept {
    ListHook<T>& hook = node.*Hook;
    assert(!is_linked(node) && "IntrusiveList::push_front of a node already linked");
    hook.next = head_;
    hook.prev = nullptr;
    if (head_ != nullptr) {
      (head_->*Hook).prev = &node;
    } else {
      tail_ = &node;
    }
    head_ = &node;
  }

  /// Links `node` right after `after`, or first when `after` is null.
  /// Precondition: `after` is null or in this list; `node` is in none.
  void insert_after(T* after, T& node) noexcept {
    if (after == nullptr) return push_front(node);
    if (after == tail_) return push_back(node);
    assert(!is_linked(node) && "IntrusiveList::insert_after of a node already linked");
    ListHook<T>& hook = node.*Hook;
    T* next = (after->*Hook).next;
    hook.prev = after;
    hook.next = next;
    (after->*Hook).next = &node;
    (next->*Hook).prev = &node;
  }

  /// The node before `node` in its list; null for the first.
  static T* prev(const T& node) noexcept { return (node.*Hook).prev; }

  /// Unlinks the first node and returns it. Precondition: not empty.
  T& pop_front() noexcept {
    T& node = front();
    erase(node);
    return node;
  }

  /// Unlinks `node`, in O(1). Precondition: it is linked in this list.
  void erase(T& node) noexcept {
    ListHook<T>& hook = node.*Hook;
    assert((hook.prev != nullptr || head_ == &node) && "IntrusiveList::erase of a node not in this list");
    if (hook.prev != nullptr) {
      (hook.prev->*Hook).next = hook.next;
    } else {
      head_ = hook.next;
    }
    if (hook.next != nullptr) {
      (hook.next->*Hook).prev = hook.prev;
    } else {
      tail_ = hook.prev;
    }
#ifndef NDEBUG
    hook = ListHook<T>{};  // unlinked: null again, for the checks
#endif
  }

  /// Orders the nodes by `less`, stably (equal nodes keep their order), in
  /// O(n log n) with no allocation: a bottom-up merge sort of the next
  /// links, whose prev links are rebuilt after.
  template <class Less>
  void sort(Less less) {
    if (head_ == tail_) return;  // empty, or one node
    T* chain = head_;
    for (std::size_t width = 1;; width *= 2) {
      // Merges each pair of runs of `width` nodes, left to right.
      T* left = chain;
      T* last = nullptr;
      chain = nullptr;
      std::size_t merges = 0;
      while (left != nullptr) {
        ++merges;
        T* right = left;
        std::size_t left_size = 0;
        while (left_size < width && right != nullptr) {
          ++left_size;
          right = (right->*Hook).next;
        }
        std::size_t right_size = width;
        while (left_size > 0 || (right_size > 0 && right != nullptr)) {
          T* taken;
          // From the left on a tie: that keeps the sort stable.
          if (left_size > 0 && (right_size == 0 || right == nullptr || !less(*right, *left))) {
            taken = left;
            left = (left->*Hook).next;
            --left_size;
          } else {
            taken = right;
            right = (right->*Hook).next;
            --right_size;
          }
          if (last != nullptr) {
            (last->*Hook).next = taken;
          } else {
            chain = taken;
          }
          last = taken;
        }
        left = right;
      }
      (last->*Hook).next = nullptr;
      if (merges <= 1) break;
    }
    head_ = chain;
    T* prev = nullptr;
    for (T* node = chain; node != nullptr; node = (node->*Hook).next) {
      (node->*Hook).prev = prev;
      prev = node;
    }
    tail_ = prev;
  }

  /// Whether `node` is linked through this hook: in this list, or in
  /// another with a neighbour (a node alone in another list has no link to
  /// tell). For the debug checks: a release build leaves an unlinked node's
  /// links unset.
  bool is_linked(const T& node) const noexcept {
    const ListHook<T>& hook = node.*Hook;
    return hook.prev != nullptr || hook.next != nullptr || head_ == &node;
  }

  /// A forward iterator over the nodes; erasing the node it points at
  /// invalidates it, as for std::list.
  template <class U>
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = U*;
    using reference = U&;

    Iterator() noexcept = default;
    explicit Iterator(U* node) noexcept : node_(node) {}
    U& operator*() const noexcept { return *node_; }
    U* operator->() const noexcept { return node_; }
    Iterator& operator++() noexcept {
      node_ = (node_->*Hook).next;
      return *this;
    }
    Iterator operator++(int) noexcept {
      Iterator was = *this;
      ++*this;
      return was;
    }
    friend bool operator==(Iterator a, Iterator b) noexcept { return a.node_ == b.node_; }

   private:
    U* node_ = nullptr;
  };

  /// The nodes, first to last.
  Iterator<T> begin() noexcept { return Iterator<T>(head_); }
  Iterator<T> end() noexcept { return Iterator<T>(); }
  Iterator<const T> begin() const noexcept { return Iterator<const T>(head_); }
  Iterator<const T> end() const noexcept { return Iterator<const T>(); }

 private:
  T* head_ = nullptr;
  T* tail_ = nullptr;
};

/// An IntrusiveList that keeps its length, for the executors' registries
/// of live tasks, whose size is asked in O(1). The other lists do not pay
/// for a count they never read.
template <class T, ListHook<T> T::*Hook>
class CountedIntrusiveList {
 public:
  /// How many nodes are linked.
  std::size_t size() const noexcept { return size_; }
  /// No node is linked.
  bool empty() const noexcept { return list_.empty(); }
  /// The first node. Precondition: not empty.
  T& front() const noexcept { return list_.front(); }
  /// Links `node` last. Precondition: it is in no list through this hook.
  void push_back(T& node) noexcept {
    list_.push_back(node);
    ++size_;
  }
  /// Unlinks the first node and returns it. Precondition: not empty.
  T& pop_front() noexcept {
    --size_;
    return list_.pop_front();
  }
  /// Unlinks `node`, in O(1). Precondition: it is linked in this list.
  void erase(T& node) noexcept {
    list_.erase(node);
    --size_;
  }
  /// The nodes, first to last.
  auto begin() noexcept { return list_.begin(); }
  auto end() noexcept { return list_.end(); }
  auto begin() const noexcept { return list_.begin(); }
  auto end() const noexcept { return list_.end(); }

 private:
  IntrusiveList<T, Hook> list_;
  std::size_t size_ = 0;
};

}  // namespace pollux::detail
