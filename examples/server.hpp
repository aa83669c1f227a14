// What the server examples share: the options on the command line, the
// runtime they name, a guard that ends a connection left idle, and a main
// loop that survives its clients and shuts down gracefully:
//
//   <server> [addr=127.0.0.1:7000] [ct|mt|N=ct] [max_secs=forever] [idle_secs=60] [grace_secs=5]
//
// "ct" is a current-thread runtime, "mt" two workers, N that many.
//
// How it stays up under a hostile client:
// - accepting goes through TcpListener::incoming(), which pauses (without
//   spinning) while the process is out of descriptors, instead of failing;
// - a connection with no activity for idle_secs is closed (the library's
//   idle_timeout): no read arrived and no write could go on (a client that
//   never reads is idle too), so one client holding sockets cannot keep
//   them for ever; the servers that read requests also give each request
//   idle_secs from its first byte to be whole (a read deadline), so a
//   client dripping a request a byte at a time is cut off too;
// - connections are counted by a TaskTracker, not kept in a set: one that
//   ends is freed at once, so memory does not grow with connections served;
// - SIGTERM or SIGINT (or max_secs) stops accepting and cancels a
//   CancellationToken that every connection races; the server waits up to
//   grace_secs for them to end, then exits 0. A second signal ends the wait.
#pragma once

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <pollux/pollux.hpp>

inline pollux::Runtime runtime_from_arg(std::string_view arg, pollux::RuntimeOptions options = {}) {
  if (arg.empty() || arg == "ct") return pollux::Runtime::current_thread(options);
  if (arg == "mt") return pollux::Runtime::multi_thread(2, options);
  int workers = std::atoi(std::string(arg).c_str());
  if (workers <= 0)
    throw std::invalid_argument("runtime must be ct, mt or a worker count, got \"" + std::string(arg) + "\"");
  return pollux::Runtime::multi_thread(static_cast<std::size_t>(workers), options);
}

// A whole number of seconds from the command line; `fallback` when absent.
inline pollux::Duration seconds_arg(int argc, char** argv, int index, pollux::Duration fallback) {
  if (argc <= index) return fallback;
  char* end = nullptr;
  long value = std::strtol(argv[index], &end, 10);
  if (end == argv[index] || *end != '\0' || value < 0) {
    throw std::invalid_argument(std::string("expected a number of seconds, got \"") + argv[index] + "\"");
  }
  return std::chrono::seconds(value);
}

// The options every server example takes after its own.
struct ServerOptions {
  pollux::Duration max = pollux::Duration::max();  // Duration::max() never completes
  pollux::Duration idle = std::chrono::seconds(60);
  pollux::Duration grace = std::chrono::seconds(5);
};

inline ServerOptions server_options(int argc, char** argv, int first) {
  ServerOptions options;
  options.max = seconds_arg(argc, argv, first, options.max);
  options.idle = seconds_arg(argc, argv, first + 1, options.idle);
  options.grace = seconds_arg(argc, argv, first + 2, options.grace);
  return options;
}

// A future of SIGINT, SIGTERM or `max`, whichever comes first.
inline auto shutdown_requested(pollux::Duration max) {
  using namespace pollux;
  return select(merge(signal::signal(SIGINT), signal::signal(SIGTERM)) | take(1) | count(), sleep(max));
}

// After shutdown was asked for: waits for the tracked connections to end,
// at most `grace`, or until a second signal. Says what it did.
inline void wait_for_connections(pollux::Runtime& rt, pollux::TaskTracker& tracker, pollux::Duration grace,
                                 const char* name) {
  using namespace pollux;
  tracker.close();
  std::printf("%s: shutting down, waiting for %zu connections\n", name, tracker.len());
  std::fflush(stdout);
  auto ended = rt.block_on(
      select(tracker.wait(), sleep(grace), merge(signal::signal(SIGINT), signal::signal(SIGTERM)) | take(1) | count()));
  if (ended.index() != 0) {
    std::printf("%s: %zu connections still open; closing them\n", name, tracker.len());
  } else {
    std::printf("%s: all connections ended, bye\n", name);
  }
  std::fflush(stdout);
}

// Accepts until SIGINT, SIGTERM or `options.max`, handing each stream to
// `start(stream)`, which spawns its connection on `tracker`, racing
// `shutdown`; then cancels `shutdown` and waits for the connections.
template <class Start>
void accept_until_shutdown(pollux::Runtime& rt, pollux::TcpListener& listener, const ServerOptions& options,
                           pollux::CancellationToken& shutdown, pollux::TaskTracker& tracker, const char* name,
                           Start start) {
  using namespace pollux;
  rt.block_on(listener.incoming() | take_until(shutdown_requested(options.max)) | for_each([&](TcpStream stream) {
                stream.set_nodelay(true);
                start(std::move(stream));
              }));
  shutdown.cancel();
  wait_for_connections(rt, tracker, options.grace, name);
}

// Makes a connection's future from its stream: Connection(stream).
template <class Connection>
struct Construct {
  Connection operator()(pollux::TcpStream stream) const { return Connection(std::move(stream)); }
};

// main() of a server whose connections are made with make(stream); each
// runs under its idle limit and is dropped when the server shuts down. A
// connection that keeps its own deadlines (a request must be whole within
// the idle limit of its first byte, say) is made with make(stream,
// options) instead, and is dropped at shutdown too. One that says goodbye
// itself is made with make(stream, shutdown, options): it watches the
// token and ends by itself (or when the grace period is over).
template <class Connection, class Make = Construct<Connection>>
int serve(const char* name, const char* scheme, int argc, char** argv, Make make = {}) {
  using namespace pollux;
  try {
    std::string addr = argc > 1 ? argv[1] : "127.0.0.1:7000";
    Runtime rt = runtime_from_arg(argc > 2 ? argv[2] : "ct");
    ServerOptions options = server_options(argc, argv, 3);
    TcpListener listener = TcpListener::bind(addr);
    std::printf("%s: listening on %s%s\n", name, scheme, listener.local_addr().to_string().c_str());
    std::fflush(stdout);
    CancellationToken shutdown;
    TaskTracker tracker;
    accept_until_shutdown(rt, listener, options, shutdown, tracker, name, [&](TcpStream stream) {
      // Detached: the task is freed when the connection ends.
      if constexpr (std::is_invocable_v<Make&, TcpStream, const CancellationToken&, const ServerOptions&>) {
        (void)tracker.spawn(idle_timeout(options.idle, make(std::move(stream), shutdown, options)), "connection");
      } else if constexpr (std::is_invocable_v<Make&, TcpStream, const ServerOptions&>) {
        (void)tracker.spawn(select(make(std::move(stream), options), shutdown.cancelled()), "connection");
      } else {
        (void)tracker.spawn(select(idle_timeout(options.idle, make(std::move(stream))), shutdown.cancelled()),
                            "connection");
      }
    });
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 1;
  }
}
