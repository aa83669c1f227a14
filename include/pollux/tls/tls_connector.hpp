// TlsConnector: the client side. Made once from a TlsConfig, shared by
// every connection (copies share one SSL_CTX and its session cache);
// connect(server_name, stream) is a future of the TlsStream once the
// handshake is done, the server's certificate checked against the CAs and
// `server_name` (sent as SNI; an IP address is checked as one, without SNI).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <string_view>
#include <utility>

#include "pollux/tls/detail/tls_context.hpp"
#include "pollux/tls/tls_config.hpp"
#include "pollux/tls/tls_stream.hpp"

namespace pollux::tls {

/// Opens TLS connections with one client configuration.
class TlsConnector {
 public:
  /// Loads the configuration's CAs (and client certificate, if any); throws
  /// std::system_error(tls_errc::bad_config) naming what is wrong.
  explicit TlsConnector(const TlsConfig& config);

  /// A future of the TlsStream over `stream` once the client's handshake
  /// with `server_name` is done; a failed one throws std::system_error
  /// (tls_category: unknown_ca, hostname_mismatch, certificate_expired,
  /// protocol_version, ...).
  template <class S>
  requires AsyncRead<S> && AsyncWrite<S>
  typename TlsStream<S>::HandshakeOp connect(std::string_view server_name, S stream) const {
    return typename TlsStream<S>::HandshakeOp(
        TlsStream<S>(std::move(stream), detail::TlsEngine(context_, false, server_name)));
  }

 private:
  Arc<detail::TlsContext> context_;
};

}  // namespace pollux::tls
