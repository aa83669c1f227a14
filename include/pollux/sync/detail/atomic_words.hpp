// AtomicWords<T>: a small trivially copyable value kept in atomic 64-bit
// words, the storage of the lock-free readers (SeqlockCell, broadcast's
// slots). A copy that races with a write reads a mix of old and new words,
// never undefined behaviour; the reader finds out from its own sequence
// check, and only a copy that passed it becomes a T again (a torn bool or
// enum would be no value of its type).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "pollux/core/detail/concurrency.hpp"

namespace pollux::detail {

/// The values AtomicWords holds: trivially copyable, at most 64 bytes.
template <class T>
inline constexpr bool kFitsAtomicWords = std::is_trivially_copyable_v<T> && sizeof(T) <= 64;

/// A value of T as atomic words: stored by one writer, copied out by any
/// reader, which decodes its copy only once it knows no write overlapped.
template <class T>
class AtomicWords {
  static_assert(kFitsAtomicWords<T>, "AtomicWords holds small trivially copyable values");

 public:
  /// The value's bytes, as read: possibly torn until the reader's check.
  using Raw = std::array<std::uint64_t, (sizeof(T) + 7) / 8>;

  /// The writer's store of each word, with release: a reader that reads a
  /// new word also sees the writer's earlier mark (odd sequence, a
  /// "writing" position) when it checks again.
  void store(const T& value) noexcept {
    Raw raw{};
    std::memcpy(raw.data(), &value, sizeof(T));
    for (std::size_t i = 0; i < raw.size(); ++i) words_[i].store(raw[i], std::memory_order_release);
  }

  /// A copy of the words, each with acquire; torn if a store overlapped.
  Raw load() const noexcept {
    Raw raw;
    for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = words_[i].load(std::memory_order_acquire);
    return raw;
  }

  /// The value of a copy no store overlapped. A bit_cast, not a T
  /// assigned into: T need be neither default-constructible nor assignable.
  static T decode(const Raw& raw) noexcept {
    std::array<std::byte, sizeof(T)> bytes;
    std::memcpy(bytes.data(), raw.data(), sizeof(T));
    return std::bit_cast<T>(bytes);
  }

 private:
  std::array<Atomic<std::uint64_t>, std::tuple_size_v<Raw>> words_{};
};

}  // namespace pollux::detail
