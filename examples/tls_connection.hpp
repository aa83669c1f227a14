// The TLS side of https_hello and tls_echo: a hand-written future that
// runs the server's handshake under a hard deadline (a client that stalls
// mid-handshake, or drips it a byte at a time, is cut off when it passes),
// then serves the TLS stream with the connection future that
// make(TlsStream) builds. A failed handshake (garbage instead of a
// ClientHello, an old protocol, a renegotiation attempt) ends only this
// connection.
#pragma once

#include <optional>
#include <system_error>
#include <type_traits>
#include <utility>

#include <pollux/pollux.hpp>
#include <pollux/tls.hpp>

template <class Make>
class TlsConnection {
 public:
  using Output = void;
  using Stream = pollux::tls::TlsStream<pollux::TcpStream>;
  using Serve = std::invoke_result_t<const Make&, Stream>;

  TlsConnection(const pollux::tls::TlsAcceptor& acceptor, pollux::TcpStream stream, Make make,
                pollux::Duration handshake_limit)
      : handshake_(acceptor.accept(std::move(stream))), make_(std::move(make)), deadline_(handshake_limit) {}

  pollux::Poll<void> poll(pollux::Context& cx) {
    if (state_ == State::Handshake) {
      try {
        pollux::Poll<Stream> done = handshake_->poll(cx);
        if (done.is_pending()) {
          deadline_.start();  // from the first poll: the whole handshake has this long
          return deadline_.poll_expired(cx).is_ready() ? pollux::ready() : pollux::pending;
        }
        serve_.emplace(make_(std::move(done).value()));
      } catch (const std::system_error&) {
        return pollux::ready();  // a failed handshake: this connection is over
      }
      handshake_.reset();
      deadline_.stop();
      state_ = State::Serving;
    }
    return serve_->poll(cx);
  }

 private:
  enum class State { Handshake, Serving };
  State state_ = State::Handshake;
  std::optional<typename Stream::HandshakeOp> handshake_;
  Make make_;
  pollux::Deadline deadline_;
  std::optional<Serve> serve_;
};

// The acceptor of a TLS server example from its certificate and key files.
inline pollux::tls::TlsAcceptor acceptor_from_files(const char* cert, const char* key) {
  return pollux::tls::TlsAcceptor(
      pollux::tls::TlsConfig::server().certificate_chain_file(cert).private_key_file(key).alpn({"http/1.1"}));
}
