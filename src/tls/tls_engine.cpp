// TlsEngine: OpenSSL over a BIO pair, its errors mapped to tls_errc.

#include "pollux/tls/detail/tls_engine.hpp"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <string>
#include <system_error>
#include <utility>

#include "pollux/tls/detail/session_cache.hpp"
#include "pollux/tls/detail/tls_context.hpp"
#include "pollux/tls/tls_error.hpp"

namespace pollux::tls::detail {

namespace {

// The most plaintext one SSL_write takes: one full record.
constexpr std::size_t kRecordPlaintext = 16 * 1024;
// Room kept above a record's plaintext for its header, tag and padding, and
// for messages OpenSSL may add before it (a TLS 1.3 server's tickets).
constexpr std::size_t kRecordSlack = 4 * 1024;
static_assert(TlsEngine::kBufferSize >= 2 * (kRecordPlaintext + kRecordSlack));

bool is_ip_address(std::string_view name) {
  std::string text(name);
  unsigned char buffer[16];
  return inet_pton(AF_INET, text.c_str(), buffer) == 1 || inet_pton(AF_INET6, text.c_str(), buffer) == 1;
}

tls_errc from_verify_result(long result) {
  switch (result) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return tls_errc::hostname_mismatch;
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return tls_errc::certificate_expired;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
      return tls_errc::unknown_ca;
    default:
      return tls_errc::certificate_invalid;
  }
}

tls_errc from_reason(int reason, bool in_handshake) {
  switch (reason) {
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
    case SSL_R_NO_PROTOCOLS_AVAILABLE:
    case SSL_R_WRONG_SSL_VERSION:
      return tls_errc::protocol_version;
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
      return tls_errc::unknown_ca;
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
      return tls_errc::certificate_expired;
    default:
      return in_handshake ? tls_errc::handshake_failed : tls_errc::bad_record;
  }
}

}  // namespace

TlsEngine::TlsEngine(Arc<TlsContext> context, bool server, std::string_view server_name)
    : context_(std::move(context)) {
  ssl_ = SSL_new(context_->get());
  BIO* internal = nullptr;
  if (ssl_ == nullptr || BIO_new_bio_pair(&internal, kBufferSize, &network_, kBufferSize) != 1) {
    SSL_free(ssl_);
    ERR_clear_error();
    throw std::bad_alloc();
  }
  SSL_set_bio(ssl_, internal, internal);  // the SSL object owns its end
  if (server) {
    SSL_set_accept_state(ssl_);
    return;
  }
  SSL_set_connect_state(ssl_);
  if (!server_name.empty()) {
    std::string name(server_name);
    if (is_ip_address(name)) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), name.c_str());  // no SNI for an address
    } else {
      SSL_set_tlsext_host_name(ssl_, name.c_str());
      if (context_->verify_peer()) SSL_set1_host(ssl_, name.c_str());
    }
  }
  if (SessionCache* sessions = context_->sessions()) {
    const char* sni = SSL_get_servername(ssl_, TLSEXT_NAMETYPE_host_name);
    if (SSL_SESSION* session = sessions->take_ref(sni != nullptr ? sni : "")) {
      SSL_set_session(ssl_, session);
      SSL_SESSION_free(session);
    }
  }
}

TlsEngine::TlsEngine(TlsEngine&& other) noexcept
    : context_(std::move(other.context_)),
      ssl_(std::exchange(other.ssl_, nullptr)),
      network_(std::exchange(other.network_, nullptr)),
      close_sent_(other.close_sent_),
      peer_closed_(other.peer_closed_) {}

TlsEngine::~TlsEngine() {
  if (network_ != nullptr) BIO_free(network_);
  if (ssl_ != nullptr) SSL_free(ssl_);
}

std::span<const std::byte> TlsEngine::output() noexcept {
  char* data = nullptr;
  int n = BIO_nread0(network_, &data);
  if (n <= 0) return {};
  return {reinterpret_cast<const std::byte*>(data), static_cast<std::size_t>(n)};
}

void TlsEngine::consume_output(std::size_t n) noexcept {
  char* data = nullptr;
  (void)BIO_nread(network_, &data, static_cast<int>(n));
}

std::span<std::byte> TlsEngine::input_space() noexcept {
  char* data = nullptr;
  int n = BIO_nwrite0(network_, &data);
  if (n <= 0) return {};
  return {reinterpret_cast<std::byte*>(data), static_cast<std::size_t>(n)};
}

void TlsEngine::commit_input(std::size_t n) noexcept {
  char* data = nullptr;
  (void)BIO_nwrite(network_, &data, static_cast<int>(n));
}

bool TlsEngine::handshake_done() const noexcept { return SSL_is_init_finished(ssl_) == 1; }

std::string_view TlsEngine::alpn_protocol() const noexcept {
  const unsigned char* data = nullptr;
  unsigned length = 0;
  SSL_get0_alpn_selected(ssl_, &data, &length);
  return {reinterpret_cast<const char*>(data), length};
}

bool TlsEngine::session_reused() const noexcept { return SSL_session_reused(ssl_) == 1; }

std::string_view TlsEngine::version() const noexcept { return SSL_get_version(ssl_); }

Step TlsEngine::handshake() {
  ERR_clear_error();
  int result = SSL_do_handshake(ssl_);
  if (result == 1) return Step::Done;
  return on_error(result, true);
}

Step TlsEngine::read(std::span<std::byte> buffer, std::size_t& n) {
  if (peer_closed_) return Step::Closed;
  ERR_clear_error();
  if (SSL_read_ex(ssl_, buffer.data(), buffer.size(), &n) == 1) return Step::Done;
  return on_error(0, !handshake_done());
}

Step TlsEngine::write(std::span<const std::byte> data, std::size_t& n) {
  n = 0;
  BIO* internal = SSL_get_wbio(ssl_);
  while (n < data.size()) {
    std::size_t chunk = std::min(data.size() - n, kRecordPlaintext);
    // Only a record the pair takes whole: OpenSSL then never keeps
    // encrypted plaintext back for a retry with the same buffer.
    if (BIO_ctrl_get_write_guarantee(internal) < chunk + kRecordSlack) break;
    ERR_clear_error();
    std::size_t written = 0;
    if (SSL_write_ex(ssl_, data.data() + n, chunk, &written) != 1) {
      Step step = on_error(0, !handshake_done());
      if (n > 0 && step != Step::Closed) return Step::Done;
      return step;
    }
    n += written;
  }
  return n > 0 ? Step::Done : Step::NeedOutput;
}

Step TlsEngine::close_notify() {
  if (close_sent_) return Step::Done;
  if (!handshake_done()) {  // nothing to close yet: the transport's end says it all
    close_sent_ = true;
    return Step::Done;
  }
  if (BIO_ctrl_get_write_guarantee(SSL_get_wbio(ssl_)) < kRecordSlack) return Step::NeedOutput;
  ERR_clear_error();
  int result = SSL_shutdown(ssl_);
  if (result < 0) {
    int error = SSL_get_error(ssl_, result);
    if (error == SSL_ERROR_WANT_WRITE) return Step::NeedOutput;
    if (error != SSL_ERROR_WANT_READ) fail(error, false);
  }
  close_sent_ = true;
  return Step::Done;
}

Step TlsEngine::input_ended(bool in_handshake) {
  if (peer_closed_ || (SSL_get_shutdown(ssl_) & SSL_RECEIVED_SHUTDOWN) != 0) {
    peer_closed_ = true;
    return Step::Closed;
  }
  if (in_handshake) {
    throw std::system_error(make_error_code(tls_errc::closed_in_handshake), "pollux::tls: handshake");
  }
  throw std::system_error(make_error_code(tls_errc::truncated), "pollux::tls: read");
}

Step TlsEngine::on_error(int result, bool in_handshake) {
  int error = SSL_get_error(ssl_, result);
  switch (error) {
    case SSL_ERROR_WANT_READ:
      return Step::NeedInput;
    case SSL_ERROR_WANT_WRITE:
      return Step::NeedOutput;
    case SSL_ERROR_ZERO_RETURN:
      peer_closed_ = true;
      return Step::Closed;
    default:
      fail(error, in_handshake);
  }
}

void TlsEngine::fail(int ssl_error, bool in_handshake) {
  std::string what = in_handshake ? "pollux::tls: handshake" : "pollux::tls: record";
  long verify = SSL_get_verify_result(ssl_);
  unsigned long err = ERR_peek_error();
  tls_errc code;
  if (in_handshake && verify != X509_V_OK && ERR_GET_REASON(err) == SSL_R_CERTIFICATE_VERIFY_FAILED) {
    code = from_verify_result(verify);
    what += ": certificate verify failed: ";
    what += X509_verify_cert_error_string(verify);
  } else if (err != 0) {
    code = from_reason(ERR_GET_REASON(err), in_handshake);
    char text[256];
    ERR_error_string_n(err, text, sizeof text);
    what += ": ";
    what += text;
  } else {
    code = in_handshake ? tls_errc::handshake_failed : tls_errc::bad_record;
    what += ": SSL error " + std::to_string(ssl_error);
  }
  ERR_clear_error();
  throw std::system_error(make_error_code(code), what);
}

}  // namespace pollux::tls::detail
