// What the TLS tests share: a small PKI made at run time with OpenSSL (a CA,
// certificates it signs for localhost and 127.0.0.1, an expired one, a
// self-signed one), written as PEM files for the real peers (openssl
// s_server and s_client, curl).
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace test {

// A certificate and its key, as PEM.
struct Identity {
  std::string cert_pem;
  std::string key_pem;
};

namespace tls_detail {

inline std::string to_pem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

inline std::string to_pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

inline void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) throw std::runtime_error("test PKI: extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `common_name` with `san` (e.g. "DNS:localhost,IP:127.0.0.1"),
// valid from `from_days` to `to_days` (relative to now), signed by the issuer
// (itself when issuer_key is null).
inline Identity make_cert(const char* common_name, const char* san, long from_days, long to_days, bool is_ca,
                          const Identity* issuer) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  static long serial = 1;
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert), from_days * 86400);
  X509_gmtime_adj(X509_getm_notAfter(cert), to_days * 86400);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name), -1, -1, 0);
  X509* issuer_cert = cert;
  EVP_PKEY* issuer_key = key;
  if (issuer != nullptr) {
    BIO* bio = BIO_new_mem_buf(issuer->cert_pem.data(), static_cast<int>(issuer->cert_pem.size()));
    issuer_cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    bio = BIO_new_mem_buf(issuer->key_pem.data(), static_cast<int>(issuer->key_pem.size()));
    issuer_key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
  }
  X509_set_issuer_name(cert, X509_get_subject_name(issuer_cert));
  if (is_ca) {
    add_extension(cert, issuer_cert, NID_basic_constraints, "critical,CA:TRUE");
    add_extension(cert, issuer_cert, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_extension(cert, issuer_cert, NID_basic_constraints, "CA:FALSE");
    add_extension(cert, issuer_cert, NID_ext_key_usage, "serverAuth,clientAuth");
    if (san != nullptr) add_extension(cert, issuer_cert, NID_subject_alt_name, san);
  }
  add_extension(cert, issuer_cert, NID_subject_key_identifier, "hash");
  X509_sign(cert, issuer_key, EVP_sha256());
  Identity out{to_pem(cert), to_pem(key)};
  if (issuer != nullptr) {
    X509_free(issuer_cert);
    EVP_PKEY_free(issuer_key);
  }
  X509_free(cert);
  EVP_PKEY_free(key);
  return out;
}

}  // namespace tls_detail

// A CA and the certificates the tests use, in memory and as files in a
// directory of their own (removed at the end).
struct TestPki {
  Identity ca = tls_detail::make_cert("pollux test CA", nullptr, -1, 30, true, nullptr);
  Identity server = tls_detail::make_cert("localhost", "DNS:localhost,IP:127.0.0.1", -1, 30, false, &ca);
  Identity expired = tls_detail::make_cert("localhost", "DNS:localhost,IP:127.0.0.1", -30, -1, false, &ca);
  Identity stranger = tls_detail::make_cert("localhost", "DNS:localhost,IP:127.0.0.1", -1, 30, false, nullptr);
  std::filesystem::path dir;

  TestPki() {
    std::string pattern = (std::filesystem::temp_directory_path() / "pollux-tls-XXXXXX").string();
    dir = ::mkdtemp(pattern.data());
    write("ca.pem", ca.cert_pem);
    write("server.pem", server.cert_pem);
    write("server.key", server.key_pem);
    write("expired.pem", expired.cert_pem);
    write("expired.key", expired.key_pem);
  }
  ~TestPki() { std::filesystem::remove_all(dir); }
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  std::string file(const char* name) const { return (dir / name).string(); }

 private:
  void write(const char* name, const std::string& text) { std::ofstream(dir / name) << text; }
};

}  // namespace test
