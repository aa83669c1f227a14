// read_to_end(reader, out): a future that appends everything `reader` has
// to `out` (a std::string or a std::vector<std::byte>) until the end of
// the stream, and is Ready with how many bytes it appended. `out` grows
// as the bytes come (at least 4 KiB of room per read, doubling), so
// reading a large stream costs few allocations. `out` must outlive it.
// Cancellation: the bytes read so far are in `out`.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/io/async_io.hpp"

namespace pollux {

/// The future read_to_end(reader, out) returns.
template <AsyncRead R, class Out>
class [[nodiscard("futures do nothing unless polled")]] ReadToEnd {
  static constexpr std::size_t kMinRoom = 4096;

 public:
  using Output = std::size_t;

  /// What read_to_end() makes; call that instead.
  ReadToEnd(R & reader, Out & out) noexcept : reader_(&reader), out_(&out) {}
  ReadToEnd(ReadToEnd && other) noexcept
      : reader_(other.reader_),
        out_(other.out_),
        read_(other.read_),
        state_(std::exchange(other.state_, State::Done)) {}
  ReadToEnd& operator=(ReadToEnd&&) = delete;
  ~ReadToEnd() {
    if (state_ == State::Waiting) reader_->abandon(Interest::Read);
  }

  /// Reads until the end of the stream, appending; Ready with the bytes read.
  Poll<std::size_t> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(ReadToEnd, state_ != State::Done);
    for (;;) {
      std::size_t used = out_->size();
      // Room to read into: the capacity already there, else double.
      std::size_t room = std::max(out_->capacity() - used, kMinRoom);
      out_->resize(used + room);
      auto n = [&] {
        try {
          return reader_->poll_read(cx, std::as_writable_bytes(std::span(out_->data() + used, room)));
        } catch (...) {
          out_->resize(used);
          throw;
        }
      }();
      out_->resize(used + (n.is_ready() ? n.value() : 0));
      if (n.is_pending()) {
        state_ = State::Waiting;
        return pending;
      }
      if (n.value() == 0) {
        state_ = State::Done;
        return ready(read_);
      }
      read_ += n.value();
    }
  }

 private:
  enum class State { Reading, Waiting, Done };
  R* reader_;
  Out* out_;
  std::size_t read_ = 0;
  State state_ = State::Reading;
};

/// Appends everything `reader` has, to its end, to `out`.
template <AsyncRead R>
ReadToEnd<R, std::vector<std::byte>> read_to_end(R& reader, std::vector<std::byte>& out) noexcept {
  return {reader, out};
}

/// Appends everything `reader` has, to its end, to `out`.
template <AsyncRead R>
ReadToEnd<R, std::string> read_to_end(R& reader, std::string& out) noexcept {
  return {reader, out};
}

}  // namespace pollux
