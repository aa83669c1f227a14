// TlsStream<S>: TLS over any pollux byte stream S (TcpStream, UnixStream, a
// child's pipes joined, a user's own): OpenSSL works on two bounded
// buffers (TlsEngine) and this class moves ciphertext between them and S,
// so it runs the same over either I/O backend. It is an AsyncRead,
// AsyncWrite, AsyncFlush and AsyncShutdown, so read, write_all, copy,
// BufReader, Framed and the codecs take it unchanged. It relies on S
// keeping rule 2 (a Pending from S stored our waker) and rule 5 (abandon).
//
// Cancellation, per operation:
//  - handshake (TlsAcceptor::accept, TlsConnector::connect): the future owns
//    the stream; destroying it drops the connection, half-shaken.
//  - poll_read: destroyed before Ready, it took no plaintext; ciphertext it
//    already read from S waits in the engine for the next read.
//  - poll_write: Ready(n) once n bytes are encrypted into the engine's
//    outgoing buffer (whole records only), which is then sent as far as S
//    takes it; a write Pending took nothing. So a write abandoned at any
//    point may be followed by any other: OpenSSL never holds a half-sent
//    record of it (no "bad write retry"). Bytes still buffered go out with
//    the next write, read, flush or shutdown: call flush() when you stop writing.
//  - poll_shutdown: queues close_notify once, sends it, then shuts S's
//    write side; polled again after a destroyed one it goes on.
//  - close(grace): shutdown, then waits at most `grace` for the peer's
//    close_notify; destroyed, it stops waiting.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/try_ready.hpp"
#include "pollux/io/async_io.hpp"
#include "pollux/io/interest.hpp"
#include "pollux/time/sleep.hpp"
#include "pollux/tls/detail/split_routes.hpp"
#include "pollux/tls/detail/tls_engine.hpp"
#include "pollux/tls/tls_error.hpp"

namespace pollux::tls {

/// How close(grace) ended.
enum class CloseOutcome : unsigned char {
  Answered,     ///< the peer sent its close_notify: both sides saw a clean end
  PeerSilent,   ///< the grace period passed with no close_notify from the peer
  PeerDropped,  ///< the peer closed the connection without close_notify
};

namespace detail {
template <class S>
class TlsSplitState;  // tls/tls_split.hpp
}  // namespace detail

/// TLS over the byte stream S (an AsyncRead and AsyncWrite), made by
/// TlsAcceptor::accept or TlsConnector::connect once its handshake is done.
/// split() (tls/tls_split.hpp) makes a read half and a write half of it.
template <class S>
requires AsyncRead<S> && AsyncWrite<S>
class TlsStream {
 public:
  class HandshakeOp;
  class CloseFuture;

  /// A stream whose handshake is still to be driven (poll_handshake).
  TlsStream(S stream, detail::TlsEngine engine) : stream_(std::move(stream)), engine_(std::move(engine)) {}
  TlsStream(TlsStream&&) noexcept = default;
  TlsStream& operator=(TlsStream&&) = delete;

  /// Drives the handshake: Ready once it is done and its last flight sent.
  /// Throws std::system_error (tls_category) with OpenSSL's reason.
  Poll<void> poll_handshake(Context& cx) {
    for (;;) {
      detail::Step step = engine_.handshake();
      POLLUX_TRY_READY(poll_send(cx));  // the peer waits for our flight before it sends its own
      if (step == detail::Step::Done) return ready();
      if (step == detail::Step::NeedInput) {
        POLLUX_TRY_READY_ASSIGN(bool more, poll_receive(cx));
        if (!more) (void)engine_.input_ended(true);  // throws: closed in the handshake
      }
    }
  }

  /// AsyncRead: decrypted bytes, or 0 once the peer's close_notify came.
  /// A connection that ends without close_notify throws tls_errc::truncated.
  Poll<std::size_t> poll_read(Context& cx, std::span<std::byte> buffer) {
    if (buffer.empty()) return ready(std::size_t{0});
    for (;;) {
      std::size_t n = 0;
      switch (engine_.read(buffer, n)) {
        case detail::Step::Done:
          return ready(n);
        case detail::Step::Closed:
          return ready(std::size_t{0});
        case detail::Step::NeedOutput:
          POLLUX_TRY_READY(poll_send(cx));
          break;
        case detail::Step::NeedInput: {
          // What we wrote goes out before we wait for the answer to it.
          POLLUX_TRY_READY(poll_send(cx));
          POLLUX_TRY_READY_ASSIGN(bool more, poll_receive(cx));
          if (!more && engine_.input_ended(false) == detail::Step::Closed) return ready(std::size_t{0});
          break;
        }
      }
    }
  }

  /// AsyncWrite: Ready(n) once n bytes (at least one) are encrypted and
  /// queued; they are sent as far as S takes them now, the rest later.
  Poll<std::size_t> poll_write(Context& cx, std::span<const std::byte> data) {
    if (data.empty()) return ready(std::size_t{0});
    for (;;) {
      std::size_t n = 0;
      detail::Step step = engine_.write(data, n);
      if (step == detail::Step::Done) {
        (void)poll_send(cx);  // as far as S takes it; the rest waits for the next operation
        return ready(n);
      }
      if (step == detail::Step::Closed)
        throw std::system_error(make_error_code(tls_errc::bad_record), "pollux::tls: write after the peer closed");
      if (step == detail::Step::NeedOutput) {
        POLLUX_TRY_READY(poll_send(cx));
      } else {
        POLLUX_TRY_READY_ASSIGN(bool more, poll_receive(cx));
        if (!more) (void)engine_.input_ended(!engine_.handshake_done());
      }
    }
  }

  /// Ready once every byte written so far went to S (and S flushed them, if it buffers).
  Poll<void> poll_flush(Context& cx) {
    POLLUX_TRY_READY(poll_send(cx));
    if constexpr (AsyncFlush<S>) {
      return on_stream(cx, Interest::Write, [&](Context& routed) { return stream_.poll_flush(routed); });
    }
    return ready();
  }

  /// Sends close_notify (once), then ends S's write side where S can.
  Poll<void> poll_shutdown(Context& cx) {
    for (;;) {
      detail::Step step = engine_.close_notify();
      POLLUX_TRY_READY(poll_send(cx));
      if (step == detail::Step::Done) break;
    }
    if constexpr (AsyncShutdown<S>) {
      return on_stream(cx, Interest::Write, [&](Context& routed) { return stream_.poll_shutdown(routed); });
    }
    return ready();
  }

  /// A read or write future going away: S lets go of its waker for that interest.
  void abandon(Interest interest) noexcept { stream_.abandon(interest); }

  /// A future that shuts down (close_notify) and then waits at most
  /// `grace` for the peer's; plaintext that comes meanwhile is dropped.
  CloseFuture close(Duration grace) { return CloseFuture(*this, grace); }

  /// The protocol ALPN chose, or "" when none.
  std::string_view alpn_protocol() const noexcept { return engine_.alpn_protocol(); }
  /// Whether the handshake resumed an earlier session.
  bool session_reused() const noexcept { return engine_.session_reused(); }
  /// The protocol version in use ("TLSv1.3").
  std::string_view version() const noexcept { return engine_.version(); }
  /// The stream under TLS.
  S& get_ref() noexcept { return stream_; }

 private:
  friend class detail::TlsSplitState<S>;

  // Polls S in `direction` through `op(cx)`; split, through the routes,
  // so that the other half's wake-up on that direction is kept too.
  template <class Op>
  auto on_stream(Context& cx, Interest direction, Op&& op) {
    if (routes_ == nullptr) return op(cx);
    return routes_->poll(cx, half_, direction, op);
  }

  // Sends what the engine holds: Ready once it is all with S.
  Poll<void> poll_send(Context& cx) {
    for (std::span<const std::byte> out = engine_.output(); !out.empty(); out = engine_.output()) {
      POLLUX_TRY_READY_ASSIGN(std::size_t n, on_stream(cx, Interest::Write, [&](Context& routed) {
                                return stream_.poll_write(routed, out);
                              }));
      engine_.consume_output(n);
    }
    return ready();
  }

  // Reads ciphertext from S into the engine: Ready(false) at S's end.
  Poll<bool> poll_receive(Context& cx) {
    std::span<std::byte> space = engine_.input_space();
    if (space.empty()) return ready(true);  // full: the engine has a record to work on
    POLLUX_TRY_READY_ASSIGN(std::size_t n, on_stream(cx, Interest::Read, [&](Context& routed) {
                              return stream_.poll_read(routed, space);
                            }));
    if (n == 0) return ready(false);
    engine_.commit_input(n);
    return ready(true);
  }

  S stream_;
  detail::TlsEngine engine_;
  detail::SplitRoutes* routes_ = nullptr;     // split: the halves' (TlsSplitState owns them)
  detail::Half half_ = detail::Half::Reader;  // split: the half polling now
};

/// The handshake of a new TlsStream, what accept() and connect() return:
/// Ready with the stream once the handshake is done.
template <class S>
requires AsyncRead<S> && AsyncWrite<S>
class TlsStream<S>::HandshakeOp {
 public:
  using Output = TlsStream<S>;
  /// The handshake of `stream`.
  explicit HandshakeOp(TlsStream<S> stream) : stream_(std::move(stream)) {}
  HandshakeOp(HandshakeOp&&) = default;
  HandshakeOp& operator=(HandshakeOp&&) = delete;

  /// Ready with the stream once its handshake is done (errors thrown).
  Poll<TlsStream<S>> poll(Context& cx) {
    POLLUX_TRY_READY(stream_->poll_handshake(cx));
    TlsStream<S> done = std::move(*stream_);
    stream_.reset();
    return Poll<TlsStream<S>>(std::in_place, std::move(done));
  }

 private:
  std::optional<TlsStream<S>> stream_;
};

/// What close(grace) returns: a future of how the close ended.
template <class S>
requires AsyncRead<S> && AsyncWrite<S>
class TlsStream<S>::CloseFuture {
 public:
  using Output = CloseOutcome;
  /// The close of `stream`, waiting `grace` for the peer's close_notify.
  CloseFuture(TlsStream<S>& stream, Duration grace) : stream_(&stream), grace_(grace) {}
  CloseFuture(CloseFuture&&) = default;
  CloseFuture& operator=(CloseFuture&&) = delete;
  ~CloseFuture() {
    if (state_ == State::Shutdown) stream_->abandon(Interest::Write);
    if (state_ == State::AwaitPeer) stream_->abandon(Interest::Read);
  }

  /// Ready once the peer answered, the grace passed, or the peer dropped the connection.
  Poll<CloseOutcome> poll(Context& cx) {
    if (state_ == State::Shutdown) {
      POLLUX_TRY_READY(stream_->poll_shutdown(cx));
      state_ = State::AwaitPeer;
      deadline_.emplace(sleep(grace_));
    }
    for (;;) {
      Poll<std::size_t> got = pending;
      try {
        got = stream_->poll_read(cx, scratch_);
      } catch (const std::system_error&) {
        state_ = State::Done;  // truncated, reset or garbage: the peer is gone either way
        return ready(CloseOutcome::PeerDropped);
      }
      if (got.is_ready() && got.value() == 0) {
        state_ = State::Done;
        return ready(CloseOutcome::Answered);
      }
      if (got.is_pending()) break;
    }
    if (deadline_->poll(cx).is_pending()) return pending;
    stream_->abandon(Interest::Read);
    state_ = State::Done;
    return ready(CloseOutcome::PeerSilent);
  }

 private:
  enum class State : unsigned char { Shutdown, AwaitPeer, Done };
  TlsStream<S>* stream_;
  Duration grace_;
  State state_ = State::Shutdown;
  std::optional<Sleep> deadline_;
  std::array<std::byte, 4096> scratch_{};
};

}  // namespace pollux::tls
