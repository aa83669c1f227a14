// The console socket's thread: poll() on the listening socket and on a
// stop eventfd, so that it sleeps until a client comes (an idle console
// costs no CPU) and the destructor can end it at once.
#include "pollux/runtime/detail/console_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace pollux::detail {

namespace {

constexpr auto kClientDeadline = std::chrono::seconds(2);

[[noreturn]] void throw_errno(int error, const std::string& what) {
  throw std::system_error(error, std::system_category(), what);
}

sockaddr_un address_of(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    throw std::invalid_argument("pollux: the console socket's path must have 1 to "
                                + std::to_string(sizeof addr.sun_path - 1) + " characters, got \"" + path + "\"");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// True when a process listens on `addr` (a connect succeeds).
bool someone_listens(const sockaddr_un& addr) {
  int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe < 0) return false;
  bool live = ::connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(probe);
  return live;
}

}  // namespace

ConsoleServer::ConsoleServer(std::string path, std::function<std::string()> snapshot)
    : path_(std::move(path)), snapshot_(std::move(snapshot)) {
  sockaddr_un addr = address_of(path_);
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) throw_errno(errno, "pollux: the console socket");
  auto fail = [&](int error, const std::string& what) {
    ::close(listen_fd_);
    if (stop_fd_ >= 0) ::close(stop_fd_);
    throw_errno(error, what);
  };
  if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) < 0) {
    int error = errno;
    if (error != EADDRINUSE) fail(error, "pollux: binding the console socket " + path_);
    // Something is at the path. Only a socket that nobody listens on, left
    // by a process that is gone, is ours to replace.
    struct stat there {};
    if (::lstat(path_.c_str(), &there) == 0 && S_ISDIR(there.st_mode))
      fail(EISDIR, "pollux: the console socket's path " + path_ + " is a directory; name a file inside it");
    if (::lstat(path_.c_str(), &there) == 0 && !S_ISSOCK(there.st_mode))
      fail(EEXIST, "pollux: the console socket's path " + path_
                       + " is a file that is not a socket; pollux replaces nothing but a stale socket");
    if (someone_listens(addr))
      fail(error, "pollux: the console socket " + path_ + " is in use: another runtime listens on it");
    ::unlink(path_.c_str());  // a socket left by a process that is gone
    if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) < 0) {
      fail(errno, "pollux: binding the console socket " + path_);
    }
  }
  struct stat bound {};
  if (::lstat(path_.c_str(), &bound) == 0) {
    bound_dev_ = static_cast<std::uint64_t>(bound.st_dev);
    bound_ino_ = static_cast<std::uint64_t>(bound.st_ino);
  }
  ::chmod(path_.c_str(), 0600);
  if (::listen(listen_fd_, 16) < 0) {
    int error = errno;
    unlink_own();
    fail(error, "pollux: listening on the console socket " + path_);
  }
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) {
    int error = errno;
    unlink_own();
    fail(error, "pollux: the console's eventfd");
  }
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& error) {
    unlink_own();
    fail(error.code().value(), "pollux: the console's thread");
  }
}

void ConsoleServer::unlink_own() const noexcept {
  struct stat now {};
  if (::lstat(path_.c_str(), &now) != 0 || !S_ISSOCK(now.st_mode)) return;
  if (static_cast<std::uint64_t>(now.st_dev) != bound_dev_ || static_cast<std::uint64_t>(now.st_ino) != bound_ino_) {
    return;  // another runtime's socket, bound after this one's was removed
  }
  ::unlink(path_.c_str());
}

ConsoleServer::~ConsoleServer() {
  std::uint64_t one = 1;
  ssize_t written = ::write(stop_fd_, &one, sizeof one);
  (void)written;  // an eventfd write of 1 cannot fail short of overflow
  thread_.join();
  ::close(listen_fd_);
  ::close(stop_fd_);
  unlink_own();
}

void ConsoleServer::run() noexcept {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;  // cannot wait any more: the console stops, the runtime goes on
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents == 0) continue;
    int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (client < 0) {
      // Out of descriptors (EMFILE) and the like: the client waits in the
      // backlog; wait a little rather than spin on its readiness.
      if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
        pollfd stop = {stop_fd_, POLLIN, 0};
        if (::poll(&stop, 1, 100) > 0) return;
      }
      continue;
    }
    serve(client);
    ::close(client);
  }
}

void ConsoleServer::serve(int client) noexcept {
  std::string text;
  try {
    text = snapshot_();
  } catch (const std::exception& error) {
    text = std::string("pollux-console error: ") + error.what() + "\n";
  }
  auto deadline = std::chrono::steady_clock::now() + kClientDeadline;
  std::size_t sent = 0;
  while (sent < text.size()) {
    ssize_t n = ::send(client, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return;  // the client went away
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;  // a client that does not read: it gets what it took
    pollfd fds[2] = {{client, POLLOUT, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, static_cast<int>(left.count())) <= 0 || fds[1].revents != 0) return;
  }
}

}  // namespace pollux::detail
