// The errors of pollux's TLS layer: std::system_error with codes of the
// "pollux.tls" category, so a caller tells a truncated stream from a clean
// end, and an unknown CA from a hostname mismatch, by the code; the
// message carries OpenSSL's own reason as well.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <system_error>
#include <type_traits>

namespace pollux::tls {

/// Why a TLS operation failed, thrown as std::system_error with tls_category().
enum class tls_errc {
  truncated = 1,        ///< the peer closed the connection without close_notify: data may be missing
  unknown_ca,           ///< the peer's certificate does not lead to a trusted CA (or is self-signed)
  hostname_mismatch,    ///< the certificate is valid but for another name
  certificate_expired,  ///< the certificate (or one in its chain) is past its end date
  certificate_invalid,  ///< the certificate failed verification for another reason
  protocol_version,     ///< the two sides accept no common protocol version
  handshake_failed,     ///< the handshake failed otherwise (the peer's alert, no shared cipher, a bad message)
  closed_in_handshake,  ///< the peer closed the connection before the handshake ended
  bad_record,           ///< a record that does not decrypt or parse, after the handshake
  bad_config,           ///< a TlsConfig that cannot be used (unreadable PEM, a key that does not match)
};

/// The category of tls_errc codes ("pollux.tls").
const std::error_category& tls_category() noexcept;

/// An error_code of tls_category().
inline std::error_code make_error_code(tls_errc e) noexcept { return {static_cast<int>(e), tls_category()}; }

}  // namespace pollux::tls

template <>
struct std::is_error_code_enum<pollux::tls::tls_errc> : std::true_type {};
