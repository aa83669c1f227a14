// SeqlockCell<T>: one small trivially copyable value (at most 64 bytes)
// that one writer replaces and any number of readers copy out, readers
// without any read-modify-write: a sequence number is odd while a write is
// in progress, and a reader retries when it changed under it. The value is
// kept in AtomicWords, so a reader racing with a write reads stale words
// and retries, never undefined behaviour. A reader that meets a write in
// progress sleeps on the sequence word (Atomic::wait) rather than
// spinning.
#pragma once

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>

#include "pollux/sync/detail/atomic_words.hpp"

namespace pollux::detail {

/// One value, one writer at a time, readers that never write.
template <class T>
class SeqlockCell {
 public:
  /// The writer (one at a time).
  void store(const T& value) noexcept {
    std::uint32_t seq = seq_.load(std::memory_order_relaxed);
    seq_.store(seq + 1, std::memory_order_relaxed);  // odd: writing
    value_.store(value);
    seq_.store(seq + 2, std::memory_order_release);
    seq_.notify_all();  // a reader that met the odd sequence sleeps on it
  }

  /// Any reader, any thread.
  T load() const noexcept {
    for (;;) {
      std::uint32_t seq = seq_.load(std::memory_order_acquire);
      if (seq & 1) {
        seq_.wait(seq, std::memory_order_acquire);
        continue;
      }
      typename AtomicWords<T>::Raw raw = value_.load();
      if (seq_.load(std::memory_order_relaxed) != seq) continue;
      return AtomicWords<T>::decode(raw);
    }
  }

 private:
  Atomic<std::uint32_t> seq_{0};
  AtomicWords<T> value_;
};

}  // namespace pollux::detail
