// The connection of echo_server: a hand-written future that reads what
// arrives and writes it back until the peer closes, a state per point
// where the Rust version awaits. Its buffer is 4 KiB.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <system_error>
#include <utility>

#include <pollux/pollux.hpp>

/// Echoes one connection until the peer closes or fails.
class EchoConnection {
 public:
  using Output = void;
  explicit EchoConnection(pollux::TcpStream stream) : stream_(std::move(stream)) {}

  pollux::Poll<void> poll(pollux::Context& cx) {
    try {
      for (;;) {
        switch (state_) {
          case State::Reading: {
            POLLUX_TRY_READY_ASSIGN(std::size_t got, stream_.poll_read(cx, buffer_));
            if (got == 0) return pollux::ready();  // the peer closed: so do we
            filled_ = got;
            written_ = 0;
            state_ = State::Writing;
            break;
          }
          case State::Writing: {
            auto rest = std::span<const std::byte>(buffer_).subspan(written_, filled_ - written_);
            POLLUX_TRY_READY_ASSIGN(std::size_t put, stream_.poll_write(cx, rest));
            written_ += put;
            if (written_ == filled_) state_ = State::Reading;
            break;
          }
        }
      }
    } catch (const std::system_error&) {
      return pollux::ready();  // reset by the peer and the like: this connection is over
    }
  }

 private:
  enum class State { Reading, Writing };
  pollux::TcpStream stream_;
  State state_ = State::Reading;
  std::size_t filled_ = 0, written_ = 0;
  std::array<std::byte, 4096> buffer_{};
};
