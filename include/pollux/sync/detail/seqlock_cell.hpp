// SeqlockCell<T>: one small trivially copyable value (at most 64 bytes)
// that one writer replaces and any number of readers copy out, readers
// without any read-modify-write: a sequence number is odd while a write is
// in progress, and a reader retries when it changed under it. The value is
// kept in atomic words, so a reader racing with a write reads stale words
// and retries, never undefined behaviour. A reader that meets a write in
// progress sleeps on the sequence word (Atomic::wait) rather than
// spinning.
#pragma once

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <array>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>

namespace pollux::detail {

template <class T>
class SeqlockCell {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 64,
                "SeqlockCell holds small trivially copyable values");
  static constexpr std::size_t kWords = (sizeof(T) + 7) / 8;

 public:
  /// The writer (one at a time).
  void store(const T& value) noexcept {
    std::array<std::uint64_t, kWords> raw{};
    std::memcpy(raw.data(), &value, sizeof(T));
    std::uint32_t seq = seq_.load(std::memory_order_relaxed);
    seq_.store(seq + 1, std::memory_order_relaxed);  // odd: writing
    // Release stores: a reader that reads any new word also sees the odd
    // sequence (or a later one) when it checks again.
    for (std::size_t i = 0; i < kWords; ++i) words_[i].store(raw[i], std::memory_order_release);
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
      std::array<std::uint64_t, kWords> raw;
      for (std::size_t i = 0; i < kWords; ++i) raw[i] = words_[i].load(std::memory_order_acquire);
      if (seq_.load(std::memory_order_relaxed) != seq) continue;
      alignas(T) unsigned char bytes[sizeof(T)];  // T need not be default-constructible
      std::memcpy(bytes, raw.data(), sizeof(T));
      return *std::launder(reinterpret_cast<T*>(bytes));
    }
  }

 private:
  Atomic<std::uint32_t> seq_{0};
  std::array<Atomic<std::uint64_t>, kWords> words_{};
};

}  // namespace pollux::detail
