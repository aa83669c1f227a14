// TlsContext: the SSL_CTX an acceptor or connector made from a TlsConfig,
// shared (Arc) by every TlsStream it made, with the client's cache of one
// session per server name for resumption.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <string>

#include "pollux/core/wake.hpp"
#include "pollux/tls/tls_config.hpp"

struct ssl_ctx_st;

namespace pollux::tls::detail {

class SessionCache;

class TlsContext : public RefCounted<TlsContext> {
 public:
  /// Builds the SSL_CTX; throws std::system_error(tls_errc::bad_config) naming OpenSSL's reason.
  explicit TlsContext(const TlsConfig& config);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  ssl_ctx_st* get() const noexcept { return ctx_; }
  bool server() const noexcept { return server_; }
  bool verify_peer() const noexcept { return verify_peer_; }
  /// The client's sessions, one per server name (null when resumption is off or on a server).
  SessionCache* sessions() const noexcept { return sessions_; }

 private:
  ssl_ctx_st* ctx_ = nullptr;
  SessionCache* sessions_ = nullptr;
  bool server_;
  bool verify_peer_;
  std::string alpn_wire_;  // the server's protocols in ALPN's wire format, for its select callback
  friend struct AlpnSelect;
};

}  // namespace pollux::tls::detail
