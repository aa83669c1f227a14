// read_until(reader, delim, out) and read_line(reader, out): futures that
// append bytes from a buffered reader to `out` up to and including the
// delimiter ('\n' for read_line), or to the end of the stream, and are
// Ready with how many bytes they appended (0: the stream had ended).
// `out` is a std::string or a std::vector<std::byte>, which must outlive
// the future. Cancel-safe in tokio's sense: destroyed half way, the bytes
// read so far are in `out`, and the rest stay in the reader, so calling it
// again with the same `out` loses nothing.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/io/async_io.hpp"

namespace pollux {

namespace detail {
/// Appends bytes to a string or a byte vector.
inline void append_bytes(std::string& out, std::span<const std::byte> bytes) {
  out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}
inline void append_bytes(std::vector<std::byte>& out, std::span<const std::byte> bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

/// The bytes up to and including the first `delim`, and whether it was
/// found (else: all of them).
inline std::pair<std::span<const std::byte>, bool> until_delim(std::span<const std::byte> bytes, std::byte delim) {
  const void* hit = std::memchr(bytes.data(), static_cast<int>(delim), bytes.size());
  if (hit == nullptr) return {bytes, false};
  std::size_t n = static_cast<std::size_t>(static_cast<const std::byte*>(hit) - bytes.data()) + 1;
  return {bytes.first(n), true};
}
}  // namespace detail

/// The future read_until(reader, delim, out) and read_line return.
template <AsyncBufRead R, class Out>
class [[nodiscard("futures do nothing unless polled")]] ReadUntil {
 public:
  using Output = std::size_t;

  /// What read_until() makes; call that instead.
  ReadUntil(R & reader, std::byte delim, Out & out) noexcept : reader_(&reader), out_(&out), delim_(delim) {}
  ReadUntil(ReadUntil && other) noexcept
      : reader_(other.reader_),
        out_(other.out_),
        delim_(other.delim_),
        read_(other.read_),
        state_(std::exchange(other.state_, State::Done)) {}
  ReadUntil& operator=(ReadUntil&&) = delete;
  ~ReadUntil() {
    if (state_ == State::Waiting) reader_->abandon(Interest::Read);
  }

  /// Reads until the delimiter (kept) or the end; Ready with the bytes appended.
  Poll<std::size_t> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(ReadUntil, state_ != State::Done);
    for (;;) {
      auto buffered = reader_->poll_fill_buf(cx);
      if (buffered.is_pending()) {
        state_ = State::Waiting;
        return pending;
      }
      if (buffered.value().empty()) break;  // the end of the stream
      auto [bytes, found] = detail::until_delim(buffered.value(), delim_);
      detail::append_bytes(*out_, bytes);
      reader_->consume(bytes.size());
      read_ += bytes.size();
      if (found) break;
    }
    state_ = State::Done;
    return ready(read_);
  }

 private:
  enum class State { Reading, Waiting, Done };

  R* reader_;
  Out* out_;
  std::byte delim_;
  std::size_t read_ = 0;
  State state_ = State::Reading;
};

/// Appends to `out` up to and including `delim`; the number of bytes appended.
template <AsyncBufRead R>
ReadUntil<R, std::vector<std::byte>> read_until(R& reader, std::byte delim, std::vector<std::byte>& out) noexcept {
  return {reader, delim, out};
}

/// Appends to `out` up to and including `delim`; the number of bytes appended.
template <AsyncBufRead R>
ReadUntil<R, std::string> read_until(R& reader, char delim, std::string& out) noexcept {
  return {reader, static_cast<std::byte>(delim), out};
}

/// Appends one line to `out`, its '\n' included (not at the end of the
/// stream); the number of bytes appended, 0 at the end.
template <AsyncBufRead R>
ReadUntil<R, std::string> read_line(R& reader, std::string& out) noexcept {
  return {reader, std::byte{'\n'}, out};
}

}  // namespace pollux
