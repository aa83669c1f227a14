// The seed's echo server: a listener that spawns one task per connection,
// and a task that reads what arrives and writes it back until the peer
// closes. Both are hand-written futures: a state per point where the Rust
// version awaits.
//
//   echo_server [addr=127.0.0.1:7000] [ct|mt|N=ct] [max_secs=forever]
//
// Exits after max_secs (or on SIGTERM/SIGINT, by their default action).
#include <pollux/pollux.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

#include "runtime_choice.hpp"

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
            pollux::Poll<std::size_t> got = stream_.poll_read(cx, buffer_);
            if (got.is_pending()) return pollux::pending;
            if (got.value() == 0) return pollux::ready();  // the peer closed: so do we
            filled_ = got.value();
            written_ = 0;
            state_ = State::Writing;
            break;
          }
          case State::Writing: {
            auto rest = std::span<const std::byte>(buffer_).subspan(written_, filled_ - written_);
            pollux::Poll<std::size_t> put = stream_.poll_write(cx, rest);
            if (put.is_pending()) return pollux::pending;
            written_ += put.value();
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

class AcceptLoop {
 public:
  using Output = void;
  explicit AcceptLoop(pollux::TcpListener& listener) : listener_(listener) {}

  pollux::Poll<void> poll(pollux::Context& cx) {
    for (;;) {
      if (!accept_) accept_.emplace(listener_.accept());
      auto accepted = accept_->poll(cx);
      if (accepted.is_pending()) return pollux::pending;
      accept_.reset();
      pollux::TcpStream& stream = accepted.value().first;
      stream.set_nodelay(true);
      pollux::spawn(EchoConnection(std::move(stream)));  // detached: the handle is dropped
    }
  }

 private:
  pollux::TcpListener& listener_;
  std::optional<pollux::TcpListener::Accept> accept_;
};

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string addr = argc > 1 ? argv[1] : "127.0.0.1:7000";
    pollux::Runtime rt = runtime_from_arg(argc > 2 ? argv[2] : "ct");
    auto max = argc > 3 ? std::chrono::seconds(std::atol(argv[3])) : std::chrono::seconds::max();
    pollux::TcpListener listener = pollux::TcpListener::bind(addr);
    std::printf("echo_server: listening on %s\n", listener.local_addr().to_string().c_str());
    std::fflush(stdout);
    rt.block_on(pollux::select(AcceptLoop(listener), pollux::sleep(max)));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "echo_server: %s\n", e.what());
    return 1;
  }
}
