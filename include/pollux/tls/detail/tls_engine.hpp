// TlsEngine: one OpenSSL connection over a BIO pair, with no I/O of its
// own: the network side is two bounded buffers (ciphertext out, ciphertext
// in) that TlsStream moves to and from its transport; the SSL side is the
// handshake, read, write and close_notify steps. Each step says what it
// needs to go on: more input, or room for output.
// The write step never starts a record the pair cannot take whole, so
// OpenSSL never holds half-sent plaintext: SSL_write does not return
// WANT_WRITE, and a write abandoned between two polls can be followed by
// any other write (no "bad write retry").
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "pollux/core/wake.hpp"

struct ssl_st;
struct bio_st;

namespace pollux::tls::detail {

class TlsContext;

/// What a step of the engine needs before it can go on.
enum class Step : unsigned char {
  Done,        ///< the step finished (a count was set where it has one)
  NeedInput,   ///< more ciphertext from the peer
  NeedOutput,  ///< room in the outgoing buffer: send what is there first
  Closed,      ///< the peer's close_notify came: no more data
};

class TlsEngine {
 public:
  /// The bytes of ciphertext the pair holds for each direction.
  static constexpr std::size_t kBufferSize = 40 * 1024;

  TlsEngine(Arc<TlsContext> context, bool server, std::string_view server_name);
  ~TlsEngine();
  TlsEngine(TlsEngine&& other) noexcept;
  TlsEngine& operator=(TlsEngine&&) = delete;

  // The network side.
  /// Ciphertext waiting for the transport (a contiguous part of it).
  std::span<const std::byte> output() noexcept;
  /// `n` bytes of output() went to the transport.
  void consume_output(std::size_t n) noexcept;
  /// Room for ciphertext from the transport (empty when full).
  std::span<std::byte> input_space() noexcept;
  /// `n` bytes were read into input_space().
  void commit_input(std::size_t n) noexcept;

  // The SSL side; each throws std::system_error (tls_category) on failure.
  Step handshake();
  /// Up to buffer.size() bytes of plaintext into `buffer`; `n` on Done.
  Step read(std::span<std::byte> buffer, std::size_t& n);
  /// Encrypts up to data.size() bytes (whole records only); `n` on Done.
  Step write(std::span<const std::byte> data, std::size_t& n);
  /// Queues close_notify (once). NeedOutput when the pair had no room yet.
  Step close_notify();
  /// The transport ended: Closed after the peer's close_notify, else throws tls_errc::truncated.
  Step input_ended(bool in_handshake);

  /// Whether the handshake is done.
  bool handshake_done() const noexcept;
  /// Whether close_notify was queued.
  bool close_notify_sent() const noexcept { return close_sent_; }
  /// The protocol ALPN chose ("" when none).
  std::string_view alpn_protocol() const noexcept;
  /// Whether the handshake resumed an earlier session.
  bool session_reused() const noexcept;
  /// The negotiated version ("TLSv1.3").
  std::string_view version() const noexcept;

 private:
  [[noreturn]] void fail(int ssl_error, bool in_handshake);
  Step on_error(int result, bool in_handshake);

  Arc<TlsContext> context_;
  ssl_st* ssl_ = nullptr;
  bio_st* network_ = nullptr;  // our end of the pair (the SSL object owns the other)
  bool close_sent_ = false;
  bool peer_closed_ = false;
};

}  // namespace pollux::tls::detail
