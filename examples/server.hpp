// What the two server examples share: the runtime named on the command
// line, a listener's accept loop that spawns one task per connection, and
// main's argument handling:
//
//   <server> [addr=127.0.0.1:7000] [ct|mt|N=ct] [max_secs=forever]
//
// "ct" is a current-thread runtime, "mt" two workers, N that many. The
// server exits after max_secs, or on SIGTERM/SIGINT by their default action.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <pollux/pollux.hpp>

inline pollux::Runtime runtime_from_arg(std::string_view arg) {
  if (arg.empty() || arg == "ct") return pollux::Runtime::current_thread();
  if (arg == "mt") return pollux::Runtime::multi_thread(2);
  int workers = std::atoi(std::string(arg).c_str());
  if (workers <= 0) throw std::invalid_argument("runtime must be ct, mt or a worker count, got \"" + std::string(arg) + "\"");
  return pollux::Runtime::multi_thread(static_cast<std::size_t>(workers));
}

// Makes a connection's future from its stream: Connection(stream).
template <class Connection>
struct Construct {
  Connection operator()(pollux::TcpStream stream) const { return Connection(std::move(stream)); }
};

// Accepts forever, spawning make(stream) for each connection: the
// tutorial's `loop { let (socket, _) = listener.accept().await?; spawn(...) }`,
// with the accept future held across polls.
template <class Connection, class Make = Construct<Connection>>
class AcceptLoop {
 public:
  using Output = void;
  explicit AcceptLoop(pollux::TcpListener& listener, Make make = {}) : listener_(listener), make_(std::move(make)) {}

  pollux::Poll<void> poll(pollux::Context& cx) {
    for (;;) {
      if (!accept_) accept_.emplace(listener_.accept());
      auto accepted = accept_->poll(cx);
      if (accepted.is_pending()) return pollux::pending;
      accept_.reset();
      pollux::TcpStream& stream = accepted.value().first;
      stream.set_nodelay(true);
      pollux::spawn(make_(std::move(stream)));  // detached: the handle is dropped
    }
  }

 private:
  pollux::TcpListener& listener_;
  Make make_;
  std::optional<pollux::TcpListener::Accept> accept_;
};

// main() of a server whose connections Connection serves, each made with
// make(stream).
template <class Connection, class Make = Construct<Connection>>
int serve(const char* name, const char* scheme, int argc, char** argv, Make make = {}) {
  try {
    std::string addr = argc > 1 ? argv[1] : "127.0.0.1:7000";
    pollux::Runtime rt = runtime_from_arg(argc > 2 ? argv[2] : "ct");
    // Duration::max() never completes; seconds::max() would overflow it.
    pollux::Duration max = argc > 3 ? pollux::Duration(std::chrono::seconds(std::atol(argv[3]))) : pollux::Duration::max();
    pollux::TcpListener listener = pollux::TcpListener::bind(addr);
    std::printf("%s: listening on %s%s\n", name, scheme, listener.local_addr().to_string().c_str());
    std::fflush(stdout);
    rt.block_on(pollux::select(AcceptLoop<Connection, Make>(listener, std::move(make)), pollux::sleep(max)));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 1;
  }
}
