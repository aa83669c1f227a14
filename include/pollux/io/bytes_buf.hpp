// BytesBuf: a growable byte buffer that owns its bytes, for framing: bytes
// are appended at the back (or read straight into its spare room), taken
// from the front (consume), and a whole frame is split off the front
// without moving the bytes behind it. Room at the front is reclaimed only
// when the back needs it, so each byte is moved at most once per growth.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace pollux {

/// A contiguous, growable buffer of bytes with cheap removal at the front.
class BytesBuf {
 public:
  /// An empty buffer that has not allocated.
  BytesBuf() noexcept = default;
  /// A buffer holding a copy of `bytes`.
  explicit BytesBuf(std::span<const std::byte> bytes) { append(bytes); }
  /// A buffer holding a copy of the characters of `text`.
  explicit BytesBuf(std::string_view text) { append(text); }
  /// A copy of `other`'s bytes (only those; not its spare room).
  BytesBuf(const BytesBuf& other) : BytesBuf(other.bytes()) {}
  /// Takes `other`'s storage; `other` is left empty.
  BytesBuf(BytesBuf&& other) noexcept
      : storage_(std::move(other.storage_)),
        capacity_(std::exchange(other.capacity_, 0)),
        begin_(std::exchange(other.begin_, 0)),
        end_(std::exchange(other.end_, 0)) {}
  /// Replaces the bytes with a copy (or the storage) of `other`'s.
  BytesBuf& operator=(BytesBuf other) noexcept {
    std::swap(storage_, other.storage_);
    std::swap(capacity_, other.capacity_);
    std::swap(begin_, other.begin_);
    std::swap(end_, other.end_);
    return *this;
  }

  /// How many bytes it holds.
  std::size_t size() const noexcept { return end_ - begin_; }
  /// True when it holds no byte.
  bool empty() const noexcept { return begin_ == end_; }
  /// How many bytes it can hold without allocating (front room included).
  std::size_t capacity() const noexcept { return capacity_; }
  /// The bytes it holds, valid until the next call that adds or removes.
  std::span<const std::byte> bytes() const noexcept { return {storage_.get() + begin_, size()}; }
  /// The bytes it holds, as characters.
  std::string_view view() const noexcept { return {reinterpret_cast<const char*>(storage_.get()) + begin_, size()}; }
  /// The byte at `i` (i < size()).
  std::byte operator[](std::size_t i) const noexcept { return storage_[begin_ + i]; }

  /// Copies `bytes` to the back.
  void append(std::span<const std::byte> bytes) {
    if (bytes.empty()) return;
    reserve(bytes.size());
    std::memcpy(storage_.get() + end_, bytes.data(), bytes.size());
    end_ += bytes.size();
  }
  /// Copies the characters of `text` to the back.
  void append(std::string_view text) { append(std::as_bytes(std::span(text.data(), text.size()))); }

  /// Makes room for at least `additional` more bytes at the back: first by
  /// reclaiming the front, else by growing (at least doubling). Throws
  /// std::length_error when the size would overflow, std::bad_alloc when
  /// memory runs out; the bytes are untouched either way.
  void reserve(std::size_t additional) {
    if (capacity_ - end_ >= additional) return;
    std::size_t held = size();
    if (additional > SIZE_MAX / 2 - held) throw std::length_error("pollux::BytesBuf: the buffer would outgrow memory");
    if (capacity_ - held >= additional && begin_ >= held) {  // the front room is larger than the bytes to move
      std::memmove(storage_.get(), storage_.get() + begin_, held);
    } else {
      std::size_t grown = std::max({capacity_ * 2, held + additional, kMinCapacity});
      auto bigger = std::make_unique_for_overwrite<std::byte[]>(grown);
      if (held > 0) std::memcpy(bigger.get(), storage_.get() + begin_, held);
      storage_ = std::move(bigger);
      capacity_ = grown;
    }
    begin_ = 0;
    end_ = held;
  }
  /// The writable room at the back (reserve() first to have some); bytes
  /// written there join the buffer with commit().
  std::span<std::byte> spare() noexcept { return {storage_.get() + end_, capacity_ - end_}; }
  /// Adds the first `n` bytes of spare() to the buffer (n <= spare().size()).
  void commit(std::size_t n) noexcept { end_ += std::min(n, capacity_ - end_); }

  /// Removes the first `n` bytes (all of them when n >= size()).
  void consume(std::size_t n) noexcept {
    begin_ += std::min(n, size());
    if (begin_ == end_) begin_ = end_ = 0;  // empty: the whole storage is room again, for free
  }
  /// Removes the first `n` bytes (n <= size(), else std::out_of_range) and
  /// returns them as a buffer of their own; the rest stays where it is.
  BytesBuf split_to(std::size_t n) {
    if (n > size()) throw std::out_of_range("pollux::BytesBuf::split_to: past the end of the buffer");
    BytesBuf front(bytes().first(n));
    consume(n);
    return front;
  }
  /// Removes every byte; keeps the storage.
  void clear() noexcept { begin_ = end_ = 0; }
  /// Frees the storage when it holds no byte (an idle connection's buffer).
  void shrink_if_empty() noexcept {
    if (!empty()) return;
    storage_.reset();
    capacity_ = begin_ = end_ = 0;
  }
  /// The bytes as a string (a copy).
  std::string to_string() const { return std::string(view()); }

  /// True when both hold the same bytes.
  friend bool operator==(const BytesBuf& a, const BytesBuf& b) noexcept { return a.view() == b.view(); }
  /// True when `a` holds the characters of `text`.
  friend bool operator==(const BytesBuf& a, std::string_view text) noexcept { return a.view() == text; }

 private:
  static constexpr std::size_t kMinCapacity = 64;

  std::unique_ptr<std::byte[]> storage_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;  // the first byte held
  std::size_t end_ = 0;    // one past the last byte held
};

}  // namespace pollux
