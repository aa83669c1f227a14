// TlsContext: a TlsConfig made into an SSL_CTX, and the client's session cache.

#include "pollux/tls/detail/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <string>
#include <system_error>
#include <unordered_map>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/tls/detail/session_cache.hpp"
#include "pollux/tls/tls_error.hpp"

namespace pollux::tls::detail {

namespace {

[[noreturn]] void config_error(const std::string& what) {
  unsigned long err = ERR_get_error();
  std::string reason = what;
  if (err != 0) {
    char text[256];
    ERR_error_string_n(err, text, sizeof text);
    reason += ": ";
    reason += text;
  }
  ERR_clear_error();
  throw std::system_error(make_error_code(tls_errc::bad_config), "pollux::tls::TlsConfig: " + reason);
}

int version_of(TlsVersion version) {
  switch (version) {
    case TlsVersion::Tls1_0:
      return TLS1_VERSION;
    case TlsVersion::Tls1_1:
      return TLS1_1_VERSION;
    case TlsVersion::Tls1_2:
      return TLS1_2_VERSION;
    case TlsVersion::Tls1_3:
      return TLS1_3_VERSION;
  }
  return TLS1_2_VERSION;
}

// The certificates of a PEM text, each handed to `use` (leaf first).
template <class Use>
int for_each_pem_certificate(const std::string& pem, Use use) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  int count = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    bool ok = use(cert, count++);
    X509_free(cert);
    if (!ok) {
      BIO_free(bio);
      return -1;
    }
  }
  ERR_clear_error();  // the end of the text reads as an error
  BIO_free(bio);
  return count;
}

int new_session(SSL* ssl, SSL_SESSION* session) {
  auto* context = static_cast<TlsContext*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  context->sessions()->store(name != nullptr ? name : "", session);
  return 1;  // the cache keeps the reference
}

}  // namespace

struct AlpnSelect {
  static int select(SSL*, const unsigned char** out, unsigned char* out_length, const unsigned char* in,
                    unsigned in_length, void* arg) {
    auto* context = static_cast<TlsContext*>(arg);
    unsigned char* chosen = nullptr;
    const auto* ours = reinterpret_cast<const unsigned char*>(context->alpn_wire_.data());
    if (SSL_select_next_proto(&chosen, out_length, ours, static_cast<unsigned>(context->alpn_wire_.size()), in,
                              in_length)
        != OPENSSL_NPN_NEGOTIATED) {
      return SSL_TLSEXT_ERR_NOACK;  // no protocol in common: go on without ALPN
    }
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
  }
};

SessionCache::~SessionCache() {
  for (auto& [name, session] : sessions_) SSL_SESSION_free(session);
}

void SessionCache::store(const std::string& name, ssl_session_st* session) {
  pollux::detail::MutexLock lock(mutex_);
  auto [it, inserted] = sessions_.try_emplace(name, session);
  if (!inserted) {
    SSL_SESSION_free(it->second);
    it->second = session;
  } else if (sessions_.size() > kMaxServers) {
    auto victim = sessions_.begin() == it ? std::next(sessions_.begin()) : sessions_.begin();
    SSL_SESSION_free(victim->second);
    sessions_.erase(victim);
  }
}

ssl_session_st* SessionCache::take_ref(const std::string& name) {
  pollux::detail::MutexLock lock(mutex_);
  auto it = sessions_.find(name);
  if (it == sessions_.end()) return nullptr;
  SSL_SESSION_up_ref(it->second);
  return it->second;
}

TlsContext::TlsContext(const TlsConfig& config) : server_(config.server_), verify_peer_(config.verify_peer_) {
  ctx_ = SSL_CTX_new(server_ ? TLS_server_method() : TLS_client_method());
  if (ctx_ == nullptr) config_error("SSL_CTX_new");
  try {
    SSL_CTX_set_app_data(ctx_, this);
    if (SSL_CTX_set_min_proto_version(ctx_, version_of(config.min_version_)) != 1) config_error("min_version");
    // Renegotiation is refused (a client's attempt gets an alert); partial
    // writes let one SSL_write take a record at a time.
    SSL_CTX_set_options(ctx_, SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_mode(ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (config.ciphers_ && SSL_CTX_set_cipher_list(ctx_, config.ciphers_->c_str()) != 1) config_error("cipher_list");

    if (config.chain_file_ && SSL_CTX_use_certificate_chain_file(ctx_, config.chain_file_->c_str()) != 1) {
      config_error("certificate_chain_file(" + *config.chain_file_ + ")");
    }
    if (config.chain_pem_) {
      int n = for_each_pem_certificate(*config.chain_pem_, [&](X509* cert, int index) {
        return index == 0 ? SSL_CTX_use_certificate(ctx_, cert) == 1 : SSL_CTX_add1_chain_cert(ctx_, cert) == 1;
      });
      if (n <= 0) config_error("certificate_chain_pem: no certificate could be read");
    }
    if (config.key_file_ && SSL_CTX_use_PrivateKey_file(ctx_, config.key_file_->c_str(), SSL_FILETYPE_PEM) != 1) {
      config_error("private_key_file(" + *config.key_file_ + ")");
    }
    if (config.key_pem_) {
      BIO* bio = BIO_new_mem_buf(config.key_pem_->data(), static_cast<int>(config.key_pem_->size()));
      EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
      BIO_free(bio);
      if (key == nullptr) config_error("private_key_pem");
      int ok = SSL_CTX_use_PrivateKey(ctx_, key);
      EVP_PKEY_free(key);
      if (ok != 1) config_error("private_key_pem");
    }
    bool has_cert = config.chain_file_ || config.chain_pem_;
    bool has_key = config.key_file_ || config.key_pem_;
    if (has_cert != has_key) config_error("a certificate chain needs its private key, and a key its chain");
    if (has_cert && SSL_CTX_check_private_key(ctx_) != 1)
      config_error("the private key does not match the certificate");
    if (server_ && !has_cert) config_error("a server needs a certificate chain and its private key");

    if (config.ca_file_ && SSL_CTX_load_verify_locations(ctx_, config.ca_file_->c_str(), nullptr) != 1) {
      config_error("ca_file(" + *config.ca_file_ + ")");
    }
    if (config.ca_pem_) {
      X509_STORE* store = SSL_CTX_get_cert_store(ctx_);
      int n = for_each_pem_certificate(*config.ca_pem_,
                                       [&](X509* cert, int) { return X509_STORE_add_cert(store, cert) == 1; });
      if (n <= 0) config_error("ca_pem: no certificate could be read");
    }
    if (verify_peer_ && !config.ca_file_ && !config.ca_pem_ && SSL_CTX_set_default_verify_paths(ctx_) != 1) {
      config_error("the system's CA store");
    }
    if (server_) {
      SSL_CTX_set_verify(ctx_, verify_peer_ ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT : SSL_VERIFY_NONE,
                         nullptr);
    } else {
      SSL_CTX_set_verify(ctx_, verify_peer_ ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
    }

    for (const std::string& protocol : config.alpn_) {
      if (protocol.empty() || protocol.size() > 255) config_error("alpn: a protocol name of 1 to 255 bytes");
      alpn_wire_.push_back(static_cast<char>(protocol.size()));
      alpn_wire_ += protocol;
    }
    if (!alpn_wire_.empty()) {
      if (server_) {
        SSL_CTX_set_alpn_select_cb(ctx_, &AlpnSelect::select, this);
      } else if (SSL_CTX_set_alpn_protos(ctx_, reinterpret_cast<const unsigned char*>(alpn_wire_.data()),
                                         static_cast<unsigned>(alpn_wire_.size()))
                 != 0) {
        config_error("alpn");
      }
    }

    if (server_) {
      if (!config.resumption_) {
        SSL_CTX_set_options(ctx_, SSL_OP_NO_TICKET);
        SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_num_tickets(ctx_, 0);
      }
    } else if (config.resumption_) {
      sessions_ = new SessionCache();
      SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
      SSL_CTX_sess_set_new_cb(ctx_, &new_session);
    }
  } catch (...) {
    SSL_CTX_free(ctx_);
    delete sessions_;
    throw;
  }
}

TlsContext::~TlsContext() {
  SSL_CTX_free(ctx_);
  delete sessions_;
}

}  // namespace pollux::tls::detail
