// The "pollux.tls" error category.

#include "pollux/tls/tls_error.hpp"

#include <string>

namespace pollux::tls {

namespace {

class TlsCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "pollux.tls"; }
  std::string message(int code) const override {
    switch (static_cast<tls_errc>(code)) {
      case tls_errc::truncated:
        return "the peer closed the connection without close_notify (the stream may be truncated)";
      case tls_errc::unknown_ca:
        return "the peer's certificate is not signed by a trusted CA";
      case tls_errc::hostname_mismatch:
        return "the peer's certificate is for another name";
      case tls_errc::certificate_expired:
        return "the peer's certificate has expired";
      case tls_errc::certificate_invalid:
        return "the peer's certificate failed verification";
      case tls_errc::protocol_version:
        return "no protocol version both sides accept";
      case tls_errc::handshake_failed:
        return "the TLS handshake failed";
      case tls_errc::closed_in_handshake:
        return "the peer closed the connection during the handshake";
      case tls_errc::bad_record:
        return "a TLS record did not decrypt or parse";
      case tls_errc::bad_config:
        return "the TLS configuration cannot be used";
    }
    return "unknown pollux.tls error";
  }
};

}  // namespace

const std::error_category& tls_category() noexcept {
  static const TlsCategory category;
  return category;
}

}  // namespace pollux::tls
