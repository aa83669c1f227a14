// ValueLock: the reader-writer lock around a watch channel's value. One
// writer (the sender) and many readers (borrow guards), each side one
// atomic read-modify-write to take and one to let go; a side that must
// wait sleeps in Atomic::wait (a futex), never spins. Cheaper than
// std::shared_mutex, whose every lock goes through pthread_rwlock.
#pragma once

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>

namespace pollux::detail {

class ValueLock {
 public:
  // The word:
  //
  //   bit 31     WRITER   the writer holds the lock, or waits for the
  //                       readers inside to leave (no new reader enters)
  //   bits 0-30  READERS  readers inside (or, for an instant, a reader
  //                       that found WRITER and is backing out)
  //
  // Transitions:
  //   lock_shared    READERS + 1; backs out and waits while WRITER is set
  //   unlock_shared  READERS - 1; the last reader wakes a waiting writer
  //   lock           + WRITER (only one writer ever), then waits for READERS = 0
  //   unlock         - WRITER, wakes the readers that wait
  void lock_shared() noexcept {
    for (;;) {
      std::uint32_t word = word_.fetch_add(1, std::memory_order_acquire);
      if (!(word & kWriter)) return;
      leave_reader();  // back out, then wait for the writer to finish
      word = word_.load(std::memory_order_relaxed);
      while (word & kWriter) {
        word_.wait(word, std::memory_order_relaxed);
        word = word_.load(std::memory_order_relaxed);
      }
    }
  }
  void unlock_shared() noexcept { leave_reader(); }

  void lock() noexcept {
    std::uint32_t word = word_.fetch_or(kWriter, std::memory_order_acquire) | kWriter;
    while (word & kReaders) {
      word_.wait(word, std::memory_order_acquire);
      word = word_.load(std::memory_order_acquire);
    }
  }
  void unlock() noexcept {
    word_.fetch_and(~kWriter, std::memory_order_release);
    word_.notify_all();  // readers that backed out wait on the word
  }

 private:
  static constexpr std::uint32_t kWriter = 1u << 31;
  static constexpr std::uint32_t kReaders = kWriter - 1;

  void leave_reader() noexcept {
    std::uint32_t word = word_.fetch_sub(1, std::memory_order_release);
    if ((word & kWriter) && (word & kReaders) == 1) word_.notify_all();  // the writer waits for us
  }

  Atomic<std::uint32_t> word_{0};
};

}  // namespace pollux::detail
