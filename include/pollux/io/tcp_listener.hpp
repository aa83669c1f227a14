// TcpListener: a listening TCP socket. bind(addr) binds at once (so that
// "address in use" is an error of bind, not of the first accept) with
// SO_REUSEADDR; accept() is a future of the next connection and its peer's
// address. Cancel-safe: an Accept destroyed before it is Ready has taken
// no connection, and takes its waker back (rule 5).
//
// accept() reports every error, running out of descriptors (EMFILE) too,
// and the listener stays readable while the backlog is full: a loop that
// calls accept() again at once after such an error spins at full CPU. Use
// incoming(), which pauses and backs off while descriptors are short, or
// back off yourself:
//
//   auto pause = std::chrono::milliseconds(5);
//   for (;;) {
//     try {
//       auto [stream, peer] = rt.block_on(listener.accept());
//       pause = std::chrono::milliseconds(5);
//       serve(std::move(stream));
//     } catch (const std::system_error& e) {
//       if (e.code() != std::errc::too_many_files_open) throw;
//       rt.block_on(pollux::sleep(pause));  // the backoff: no spin
//       pause = std::min(pause * 2, std::chrono::milliseconds(640));
//     }
//   }
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/io/detail/accept_backoff.hpp"
#include "pollux/io/detail/io_source.hpp"
#include "pollux/io/socket_addr.hpp"
#include "pollux/io/tcp_stream.hpp"

#include <optional>

namespace pollux {

/// A listening TCP socket.
class TcpListener {
 public:
  /// What accept() returns: a future of the next connection and its peer's address.
  using Accept = IoFuture<AcceptOp<TcpListener>>;
  class Incoming;

  /// Throws std::system_error naming the address ("address already in use").
  static TcpListener bind(const SocketAddr& addr, int backlog = 1024);
  /// bind() of an address in text ("127.0.0.1:8080", "[::1]:0").
  static TcpListener bind(std::string_view addr, int backlog = 1024) { return bind(SocketAddr::parse(addr), backlog); }

  TcpListener(TcpListener&&) noexcept = default;
  TcpListener& operator=(TcpListener&&) noexcept = default;

  /// A future of the next connection and its peer's address. Cancel-safe: a
  /// connection not yet accepted stays in the backlog. Throws every error,
  /// EMFILE included: do not retry at once (see the top of this header),
  /// or use incoming(), which backs off.
  Accept accept() noexcept;
  /// The accepted connections as a Stream that never ends (errors are
  /// thrown from poll_next); it borrows the listener.
  Incoming incoming() noexcept;

  /// The address it listens on (with the port the kernel chose for port 0).
  SocketAddr local_addr() const noexcept { return local_; }
  /// The socket's file descriptor; this object still owns it.
  int native_handle() const noexcept { return source_.fd(); }

  /// What accept() polls: a connection, or Pending with the waker of `cx` kept.
  Poll<std::pair<TcpStream, SocketAddr>> poll_accept(Context& cx);
  /// An accept() going away lets go of its waker (rule 5); accepting waits
  /// on Interest::Read.
  void abandon(Interest interest) noexcept { source_.abandon(interest); }

 private:
  TcpListener(detail::IoSource source, const SocketAddr& local) noexcept : source_(std::move(source)), local_(local) {}

  detail::IoSource source_;
  SocketAddr local_;
};

inline TcpListener::Accept TcpListener::accept() noexcept { return Accept(*this); }

/// The stream TcpListener::incoming returns. Destroying it while it waits
/// takes its waker back from the listener (rule 5); no connection is lost.
///
/// It outlives errors that are not the listener's: a connection that
/// failed in the backlog (ECONNABORTED, ECONNRESET, EPERM from a firewall,
/// the network errors of accept(2)) is skipped, and running out of
/// descriptors or kernel memory (EMFILE, ENFILE, ENOBUFS, ENOMEM) pauses
/// accepting (5 ms, doubling up to 640 ms while it lasts; no busy loop),
/// reported once on stderr, until a connection is accepted again. Other
/// errors are thrown. accept() reports every error to its caller.
class [[nodiscard("streams do nothing unless polled")]] TcpListener::Incoming {
 public:
  using Item = TcpStream;

  /// What incoming() makes.
  explicit Incoming(TcpListener & listener) noexcept : listener_(&listener) {}
  Incoming(Incoming && other) noexcept : listener_(other.listener_), waiting_(std::exchange(other.waiting_, false)) {}
  Incoming& operator=(Incoming&&) = delete;
  ~Incoming() {
    if (waiting_) listener_->abandon(Interest::Read);
  }

  /// The next connection; an error of one connection is skipped, running out of descriptors
  /// pauses the stream, and it never ends.
  Poll<std::optional<TcpStream>> poll_next(Context & cx) {
    auto accepted = backoff_.poll_accept(cx, [this](Context& c) { return listener_->poll_accept(c); });
    waiting_ = accepted.is_pending();
    if (waiting_) return pending;
    return ready(std::move(accepted.value().first));
  }

 private:
  TcpListener* listener_;
  bool waiting_ = false;
  detail::AcceptBackoff backoff_;
};

inline TcpListener::Incoming TcpListener::incoming() noexcept { return Incoming(*this); }

}  // namespace pollux
