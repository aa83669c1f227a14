// What the socket tests share: hand-written futures for an echo server and
// its clients, and the process's file descriptors.
#pragma once

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <optional>
#include <vector>

#include <pollux/pollux.hpp>

namespace test {

// Raises the soft limit on open files to at least `needed`; false if the
// hard limit is lower.
inline bool raise_fd_limit(rlim_t needed) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
  if (limit.rlim_cur >= needed) return true;
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed) return false;
  limit.rlim_cur = needed;
  return setrlimit(RLIMIT_NOFILE, &limit) == 0;
}

// How many file descriptors the process has open.
inline int open_fds() {
  int count = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;  // the directory's own fd
}

// Takes every free descriptor (under a limit lowered to a few above those
// open), and gives them back when destroyed.
struct HoldEveryFd {
  std::vector<int> held;
  HoldEveryFd() {
    rlimit limit{};
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = static_cast<rlim_t>(test::open_fds() + 16);
    setrlimit(RLIMIT_NOFILE, &limit);
    for (int fd; (fd = ::dup(STDIN_FILENO)) >= 0;) held.push_back(fd);
  }
  ~HoldEveryFd() { release(); }
  void release() {
    for (int fd : held) ::close(fd);
    held.clear();
  }
};

// Echoes everything it reads until the peer closes.
class EchoServe {
 public:
  using Output = void;
  explicit EchoServe(pollux::TcpStream stream) : stream_(std::move(stream)) {}

  pollux::Poll<void> poll(pollux::Context& cx) {
    for (;;) {
      if (filled_ == written_) {
        pollux::Poll<std::size_t> got = stream_.poll_read(cx, buffer_);
        if (got.is_pending()) return pollux::pending;
        if (got.value() == 0) return pollux::ready();
        filled_ = got.value();
        written_ = 0;
      }
      pollux::Poll<std::size_t> put =
          stream_.poll_write(cx, std::span<const std::byte>(buffer_).subspan(written_, filled_ - written_));
      if (put.is_pending()) return pollux::pending;
      written_ += put.value();
    }
  }

 private:
  pollux::TcpStream stream_;
  std::array<std::byte, 4096> buffer_{};
  std::size_t filled_ = 0, written_ = 0;
};

// Accepts `count` connections, spawning an EchoServe for each.
class AcceptAndEcho {
 public:
  using Output = void;
  AcceptAndEcho(pollux::TcpListener& listener, int count) : listener_(&listener), remaining_(count) {}

  pollux::Poll<void> poll(pollux::Context& cx) {
    while (remaining_ > 0) {
      if (!accept_) accept_.emplace(listener_->accept());
      auto accepted = accept_->poll(cx);
      if (accepted.is_pending()) return pollux::pending;
      accept_.reset();
      pollux::spawn(EchoServe(std::move(accepted.value().first)));
      --remaining_;
    }
    return pollux::ready();
  }

 private:
  pollux::TcpListener* listener_;
  int remaining_;
  std::optional<pollux::TcpListener::Accept> accept_;
};

// Connects, then sends a 64-byte message `rounds` times, each time waiting
// for its echo and checking it; Ready with the round trips done.
class PingClient {
 public:
  using Output = int;
  PingClient(pollux::SocketAddr addr, int id, int rounds)
      : connect_(pollux::TcpStream::connect(addr)), rounds_(rounds) {
    for (std::size_t i = 0; i < message_.size(); ++i) message_[i] = static_cast<std::byte>(id * 31 + i);
  }

  pollux::Poll<int> poll(pollux::Context& cx) {
    for (;;) {
      switch (state_) {
        case State::Connecting: {
          auto connected = connect_.poll(cx);
          if (connected.is_pending()) return pollux::pending;
          stream_.emplace(std::move(connected.value()));
          state_ = State::Sending;
          break;
        }
        case State::Sending:
          if (done_ == rounds_) return pollux::ready(done_);
          if (!write_) write_.emplace(stream_->write_all(message_));
          if (write_->poll(cx).is_pending()) return pollux::pending;
          write_.reset();
          state_ = State::Receiving;
          break;
        case State::Receiving:
          if (!read_) read_.emplace(stream_->read_exact(echo_));
          if (read_->poll(cx).is_pending()) return pollux::pending;
          read_.reset();
          if (echo_ != message_) throw std::runtime_error("the echo differs from the message");
          ++done_;
          state_ = State::Sending;
          break;
      }
    }
  }

 private:
  enum class State { Connecting, Sending, Receiving };
  pollux::TcpStream::Connect connect_;
  std::optional<pollux::TcpStream> stream_;
  std::optional<pollux::WriteAll<pollux::TcpStream>> write_;
  std::optional<pollux::ReadExact<pollux::TcpStream>> read_;
  std::array<std::byte, 64> message_{};
  std::array<std::byte, 64> echo_{};
  int rounds_;
  int done_ = 0;
  State state_ = State::Connecting;
};

// Reads until the end of the stream; Ready with every byte.
class ReadToEnd {
 public:
  using Output = std::vector<std::byte>;
  explicit ReadToEnd(pollux::TcpStream& stream) : stream_(&stream) {}

  pollux::Poll<std::vector<std::byte>> poll(pollux::Context& cx) {
    for (;;) {
      std::size_t have = bytes_.size();
      bytes_.resize(have + 65536);
      pollux::Poll<std::size_t> got = stream_->poll_read(cx, std::span<std::byte>(bytes_).subspan(have));
      bytes_.resize(have + (got.is_ready() ? got.value() : 0));
      if (got.is_pending()) return pollux::pending;
      if (got.value() == 0) return pollux::ready(std::move(bytes_));
    }
  }

 private:
  pollux::TcpStream* stream_;
  std::vector<std::byte> bytes_;
};

// A connected pair: the client's stream and the one the listener accepted.
struct Connected {
  pollux::TcpStream client;
  pollux::TcpStream server;
};

inline Connected connect_pair(pollux::Runtime& rt, pollux::TcpListener& listener) {
  auto [client, accepted] =
      rt.block_on(pollux::join(pollux::TcpStream::connect(listener.local_addr()), listener.accept()));
  return Connected{std::move(client), std::move(accepted.first)};
}

}  // namespace test
