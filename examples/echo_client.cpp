// A load client for echo_server: `connections` connections, each sending
// 64 bytes and waiting for all 64 to come back before sending again, for
// `seconds`; then prints the round trips per second. All of them run as
// futures joined on one thread; the timer that ends the run cancels them
// (select drops the losing join, which closes every socket).
//
//   echo_client [addr=127.0.0.1:7000] [connections=50] [seconds=2]
//
// Exits 1 if a connection fails or an echo comes back wrong.
#include <pollux/pollux.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kMessage = 64;

class PingConnection {
 public:
  using Output = void;
  PingConnection(pollux::SocketAddr addr, int id, std::uint64_t& round_trips)
      : connect_(pollux::TcpStream::connect(addr)), round_trips_(round_trips) {
    for (std::size_t i = 0; i < kMessage; ++i) message_[i] = static_cast<std::byte>('a' + (id + i) % 26);
  }

  pollux::Poll<void> poll(pollux::Context& cx) {
    for (;;) {
      switch (state_) {
        case State::Connecting: {
          POLLUX_TRY_READY_ASSIGN(auto connected, connect_.poll(cx));
          stream_.emplace(std::move(connected));
          stream_->set_nodelay(true);
          state_ = State::Sending;
          break;
        }
        case State::Sending:
          // 64 bytes fit any send buffer: a write takes them whole, except
          // on a congested socket, where write_all takes care of the rest.
          POLLUX_TRY_READY(write_.poll(cx, [&] { return stream_->write_all(message_); }));
          state_ = State::Receiving;
          break;
        case State::Receiving:
          POLLUX_TRY_READY(read_.poll(cx, [&] { return stream_->read_exact(echo_); }));
          if (echo_ != message_) throw std::runtime_error("the echo differs from the message sent");
          ++round_trips_;
          state_ = State::Sending;
          break;
      }
    }
  }

 private:
  enum class State { Connecting, Sending, Receiving };
  pollux::TcpStream::Connect connect_;
  std::optional<pollux::TcpStream> stream_;
  // Each empties itself when its future is Ready: the next round trip
  // starts a new one.
  pollux::FutureSlot<pollux::WriteAll<pollux::TcpStream>> write_;
  pollux::FutureSlot<pollux::ReadExact<pollux::TcpStream>> read_;
  std::array<std::byte, kMessage> message_;
  std::array<std::byte, kMessage> echo_{};
  std::uint64_t& round_trips_;
  State state_ = State::Connecting;
};

}  // namespace

int main(int argc, char** argv) {
  try {
    auto addr = pollux::SocketAddr::parse(argc > 1 ? argv[1] : "127.0.0.1:7000");
    int connections = argc > 2 ? std::atoi(argv[2]) : 50;
    double seconds = argc > 3 ? std::atof(argv[3]) : 2.0;
    if (connections <= 0 || seconds <= 0) throw std::invalid_argument("connections and seconds must be positive");

    auto rt = pollux::Runtime::current_thread();
    std::uint64_t round_trips = 0;
    std::vector<PingConnection> pings;
    pings.reserve(static_cast<std::size_t>(connections));
    for (int i = 0; i < connections; ++i) pings.emplace_back(addr, i, round_trips);
    auto span = std::chrono::duration_cast<pollux::Duration>(std::chrono::duration<double>(seconds));
    auto start = std::chrono::steady_clock::now();
    rt.block_on(pollux::select(pollux::join_all(std::move(pings)), pollux::sleep(span)));
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("echo_client: %d connections to %s, %.1f s: %llu round trips, %.0f round trips/s\n", connections,
                addr.to_string().c_str(), elapsed, static_cast<unsigned long long>(round_trips),
                static_cast<double>(round_trips) / elapsed);
    return round_trips > 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "echo_client: %s\n", e.what());
    return 1;
  }
}
