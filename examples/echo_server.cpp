// The echo server of "Writing an Async Runtime in Rust": a listener that
// spawns one task per connection (serve, in server.hpp), and a task that
// reads what arrives and writes it back until the peer closes. Both are
// hand-written futures: a state per point where the Rust version awaits.
//
//   echo_server [addr=127.0.0.1:7000] [ct|mt|N=ct] [max_secs=forever] [idle_secs=60] [grace_secs=5]
//
// Memory per connection: its 4 KiB buffer and the task (under 5 KiB).
#include <pollux/pollux.hpp>

#include <array>
#include <cstdio>
#include <string>

#include "server.hpp"

namespace {

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

}  // namespace

int main(int argc, char** argv) { return serve<EchoConnection>("echo_server", "", argc, argv); }
