// TlsAcceptor: the server side. Made once from a TlsConfig (certificate,
// key, ...), shared by every connection (copies share one SSL_CTX);
// accept(stream) is a future of the TlsStream once the handshake is done.
// Wrap it in timeout() for a handshake deadline: a client that stalls
// mid-handshake otherwise holds its connection as long as it likes.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <utility>

#include "pollux/io/io_future.hpp"
#include "pollux/tls/detail/tls_context.hpp"
#include "pollux/tls/tls_config.hpp"
#include "pollux/tls/tls_stream.hpp"

namespace pollux::tls {

/// Accepts TLS connections with one server configuration.
class TlsAcceptor {
 public:
  /// Loads the configuration's certificate and key; throws
  /// std::system_error(tls_errc::bad_config) naming what is wrong.
  explicit TlsAcceptor(const TlsConfig& config);

  /// A future of the TlsStream over `stream` once the server's handshake is
  /// done; a failed handshake throws std::system_error (tls_category).
  template <class S>
  requires AsyncRead<S> && AsyncWrite<S>
  typename TlsStream<S>::HandshakeOp accept(S stream) const {
    return typename TlsStream<S>::HandshakeOp(TlsStream<S>(std::move(stream), detail::TlsEngine(context_, true, {})));
  }

 private:
  Arc<detail::TlsContext> context_;
};

}  // namespace pollux::tls
