// TlsConfig: what a TlsAcceptor or TlsConnector is made from: certificate
// chain and key (PEM files or memory), the CAs to trust (a bundle or the
// system store), whether to verify the peer, ALPN protocols, the lowest
// protocol version, session resumption. A plain value: nothing is loaded
// until an acceptor or connector is made from it, which reports a bad file
// or key as tls_errc::bad_config naming OpenSSL's reason.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <optional>
#include <string>
#include <vector>

namespace pollux::tls {

namespace detail {
class TlsContext;
}

/// A TLS protocol version, for TlsConfig::min_version.
enum class TlsVersion : unsigned char { Tls1_0, Tls1_1, Tls1_2, Tls1_3 };

/// The settings of one side of TLS connections.
class TlsConfig {
 public:
  /// A client's defaults: verify the server against the system's CAs and its name, TLS 1.2 or later.
  static TlsConfig client() { return TlsConfig(false); }
  /// A server's defaults: a certificate and key are needed; clients are not asked for one.
  static TlsConfig server() { return TlsConfig(true); }

  /// The certificate chain (leaf first) from a PEM file.
  TlsConfig& certificate_chain_file(std::string path) { return set(chain_file_, std::move(path)); }
  /// The certificate chain (leaf first) as PEM text.
  TlsConfig& certificate_chain_pem(std::string pem) { return set(chain_pem_, std::move(pem)); }
  /// The private key from a PEM file.
  TlsConfig& private_key_file(std::string path) { return set(key_file_, std::move(path)); }
  /// The private key as PEM text.
  TlsConfig& private_key_pem(std::string pem) { return set(key_pem_, std::move(pem)); }
  /// Trust the CAs of a PEM bundle file (instead of the system's).
  TlsConfig& ca_file(std::string path) { return set(ca_file_, std::move(path)); }
  /// Trust the CAs of a PEM text (instead of the system's).
  TlsConfig& ca_pem(std::string pem) { return set(ca_pem_, std::move(pem)); }
  /// Whether to verify the peer: a client checks the server's chain and
  /// name (default on); a server asks for and checks a client certificate (default off).
  TlsConfig& verify_peer(bool on) {
    verify_peer_ = on;
    return *this;
  }
  /// The ALPN protocols, in order of preference ("h2", "http/1.1").
  TlsConfig& alpn(std::vector<std::string> protocols) {
    alpn_ = std::move(protocols);
    return *this;
  }
  /// The lowest protocol version accepted (default TLS 1.2).
  TlsConfig& min_version(TlsVersion version) {
    min_version_ = version;
    return *this;
  }
  /// Session resumption: a connector offers the last session of the same
  /// server name; an acceptor issues tickets (default on). As OpenSSL
  /// does, a session resumes only after a connection that was shut down
  /// (close_notify), not one that was cut.
  TlsConfig& session_resumption(bool on) {
    resumption_ = on;
    return *this;
  }
  /// OpenSSL's cipher list for TLS 1.2 and lower (default: OpenSSL's).
  TlsConfig& cipher_list(std::string ciphers) { return set(ciphers_, std::move(ciphers)); }

  /// Whether this is a server's configuration.
  bool is_server() const noexcept { return server_; }

 private:
  explicit TlsConfig(bool server) : server_(server), verify_peer_(!server) {}
  TlsConfig& set(std::optional<std::string>& field, std::string value) {
    field = std::move(value);
    return *this;
  }

  bool server_;
  bool verify_peer_;
  bool resumption_ = true;
  TlsVersion min_version_ = TlsVersion::Tls1_2;
  std::optional<std::string> chain_file_, chain_pem_, key_file_, key_pem_, ca_file_, ca_pem_, ciphers_;
  std::vector<std::string> alpn_;

  friend class detail::TlsContext;
};

}  // namespace pollux::tls
