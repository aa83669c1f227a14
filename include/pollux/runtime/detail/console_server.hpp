// ConsoleServer: a runtime's console socket (RuntimeOptions::console_socket
// or POLLUX_CONSOLE). A thread of its own, not a task, serves it, so that a
// runtime whose tasks hang still answers: it accepts on a Unix socket and
// writes one snapshot per connection (runtime/console_snapshot.hpp), then
// closes it. A client gets at most two seconds to take its snapshot, so a
// client that never reads cannot hold the console.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>
#include <functional>
#include <string>
#include <thread>

namespace pollux::detail {

class ConsoleServer {
 public:
  // Listens on `path` (mode 0600: the socket shows task names) and starts
  // the thread, which answers each connection with `snapshot()`. A socket
  // file left by a process that is gone is replaced; one that a live
  // process listens on is not, and nothing but a socket is ever removed (a
  // regular file or a directory at the path is an error that says so).
  // Throws std::invalid_argument for a path too long for a Unix socket,
  // std::system_error when the socket or the thread cannot be made.
  ConsoleServer(std::string path, std::function<std::string()> snapshot);
  // Stops the thread, then closes the socket and removes its file if it
  // is still the one this server bound (not one put there since).
  ~ConsoleServer();
  ConsoleServer(const ConsoleServer&) = delete;
  ConsoleServer& operator=(const ConsoleServer&) = delete;

  const std::string& path() const noexcept { return path_; }

 private:
  void run() noexcept;
  void serve(int client) noexcept;
  // Unlinks the path if it is still the socket this server bound.
  void unlink_own() const noexcept;

  std::string path_;
  std::function<std::string()> snapshot_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // an eventfd: written once, by the destructor
  // The bound socket file's identity (st_dev, st_ino), so that only it is
  // ever unlinked.
  std::uint64_t bound_dev_ = 0;
  std::uint64_t bound_ino_ = 0;
  std::thread thread_;
};

}  // namespace pollux::detail
