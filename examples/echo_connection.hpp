// The connection of echo_server (and, over TLS, of tls_echo): a
// hand-written future that reads what arrives and writes it back until the
// peer closes, a state per point where the Rust version awaits, then ends
// its own side (a FIN; over TLS a close_notify first). Its buffer is 4 KiB.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <system_error>
#include <utility>

#include <pollux/pollux.hpp>

/// Echoes one connection until the peer closes or fails.
template <class Stream>
class BasicEchoConnection {
 public:
  using Output = void;
  explicit BasicEchoConnection(Stream stream) : stream_(std::move(stream)) {}

  pollux::Poll<void> poll(pollux::Context& cx) {
    try {
      for (;;) {
        switch (state_) {
          case State::Reading: {
            POLLUX_TRY_READY_ASSIGN(std::size_t got, stream_.poll_read(cx, buffer_));
            if (got == 0) {  // the peer closed: so do we
              state_ = State::Closing;
              break;
            }
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
          case State::Closing:
            return stream_.poll_shutdown(cx);
        }
      }
    } catch (const std::system_error&) {
      return pollux::ready();  // reset by the peer and the like: this connection is over
    }
  }

 private:
  enum class State { Reading, Writing, Closing };
  Stream stream_;
  State state_ = State::Reading;
  std::size_t filled_ = 0, written_ = 0;
  std::array<std::byte, 4096> buffer_{};
};

/// The echo connection of a plain TCP stream.
using EchoConnection = BasicEchoConnection<pollux::TcpStream>;
