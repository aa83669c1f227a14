// write_all(stream, bytes): writes until every byte is taken, however many
// partial writes that needs (a small send buffer, a slow reader). Not
// cancel-safe: destroyed half way, some prefix of the bytes was sent.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <span>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/io/async_io.hpp"
#include "pollux/io/io_error.hpp"

namespace pollux {

/// What write_all(stream, bytes) returns: writes until every byte is taken, however many partial
/// writes that needs (a small send buffer, a slow reader).
template <AsyncWrite S>
class [[nodiscard("futures do nothing unless polled")]] WriteAll {
 public:
  using Output = void;

  /// What write_all() makes; call that instead.
  WriteAll(S & stream, std::span<const std::byte> bytes) noexcept : stream_(&stream), bytes_(bytes) {}
  WriteAll(WriteAll && other) noexcept
      : stream_(other.stream_),
        bytes_(other.bytes_),
        written_(other.written_),
        state_(std::exchange(other.state_, State::Done)) {}
  WriteAll& operator=(WriteAll&&) = delete;
  ~WriteAll() {
    if (state_ == State::Waiting) stream_->abandon(Interest::Write);
  }

  /// Writes until every byte was written; Ready then.
  Poll<void> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(WriteAll, state_ != State::Done);
    while (written_ < bytes_.size()) {
      Poll<std::size_t> put = stream_->poll_write(cx, bytes_.subspan(written_));
      if (put.is_pending()) {
        state_ = State::Waiting;
        return pending;
      }
      if (put.value() == 0) {
        state_ = State::Done;
        detail::throw_write_zero("pollux::write_all", written_, bytes_.size());
      }
      written_ += put.value();
    }
    state_ = State::Done;
    return ready();
  }

 private:
  enum class State { Writing, Waiting, Done };

  S* stream_;
  std::span<const std::byte> bytes_;
  std::size_t written_ = 0;
  State state_ = State::Writing;
};

/// A future that writes all of `bytes` to `stream`.
template <AsyncWrite S>
WriteAll<S> write_all(S& stream, std::span<const std::byte> bytes) noexcept {
  return WriteAll<S>(stream, bytes);
}

}  // namespace pollux
