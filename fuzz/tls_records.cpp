// The TLS record path as a hostile peer feeds it, through pollux-tls's
// TlsStream over an in-memory stream. The first byte picks where the
// fuzzer's bytes go (the rest, cut into reads of sizes the input picks):
//   even: to a server, in place of a ClientHello (garbage, cut or partial
//         handshake records);
//   odd:  to a client after a real handshake and a real record from the
//         server, as the records that follow (garbage, cut, or replayed).
// Either way the stream must throw a tls error, give data, end or wait;
// never crash, hang or read out of bounds.
#include <pollux/pollux.hpp>
#include <pollux/tls.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

#include "tls_support.hpp"

namespace {

// One direction of an in-memory connection.
struct Pipe {
  std::string bytes;
  bool closed = false;
};

// A byte stream that reads one pipe and writes the other; Pending when
// there is nothing to read yet (the target polls with the no-op waker and
// drives both sides in turn). After `feed` is set, reads come from it
// instead, cut into the sizes of `cuts`, then the stream ends.
class MemoryStream {
 public:
  MemoryStream(Pipe* in, Pipe* out) : in_(in), out_(out) {}

  pollux::Poll<std::size_t> poll_read(pollux::Context&, std::span<std::byte> buffer) {
    if (feeding_) {
      std::size_t want =
          cuts_.empty() ? buffer.size() : 1 + static_cast<unsigned char>(cuts_[next_++ % cuts_.size()]) % 64;
      std::size_t n = std::min({want, buffer.size(), feed_.size()});
      std::memcpy(buffer.data(), feed_.data(), n);
      feed_.remove_prefix(n);
      return pollux::ready(n);  // 0 once the input is used up: the end
    }
    if (in_->bytes.empty())
      return in_->closed ? pollux::ready(std::size_t{0}) : pollux::Poll<std::size_t>(pollux::pending);
    std::size_t n = std::min(buffer.size(), in_->bytes.size());
    std::memcpy(buffer.data(), in_->bytes.data(), n);
    in_->bytes.erase(0, n);
    return pollux::ready(n);
  }
  pollux::Poll<std::size_t> poll_write(pollux::Context&, std::span<const std::byte> data) {
    out_->bytes.append(reinterpret_cast<const char*>(data.data()), data.size());
    return pollux::ready(data.size());
  }
  void abandon(pollux::Interest) noexcept {}

  void feed(std::string_view bytes, std::string_view cuts) {
    feeding_ = true;
    feed_ = bytes;
    cuts_ = cuts;
  }

 private:
  Pipe* in_;
  Pipe* out_;
  bool feeding_ = false;
  std::string_view feed_, cuts_;
  std::size_t next_ = 0;
};

struct Endpoints {
  test::TestPki pki;
  pollux::tls::TlsAcceptor acceptor{
      pollux::tls::TlsConfig::server().certificate_chain_pem(pki.server.cert_pem).private_key_pem(pki.server.key_pem)};
  pollux::tls::TlsConnector connector{
      pollux::tls::TlsConfig::client().ca_pem(pki.ca.cert_pem).session_resumption(false)};
};

const Endpoints& endpoints() {
  static const Endpoints e;
  return e;
}

// Polls `op` until it is Ready (true) or stops making progress (false).
template <class Op>
bool drive(Op& op, pollux::Context& cx) {
  for (int i = 0; i < 64; ++i) {
    if (op.poll(cx).is_ready()) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const Endpoints& e = endpoints();
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string_view cuts = input.substr(0, std::min<std::size_t>(8, input.size()));
  std::string_view bytes = input.substr(cuts.size());
  pollux::Context cx(pollux::noop_waker());
  std::array<std::byte, 4096> buffer{};
  try {
    if (data[0] % 2 == 0) {
      Pipe to_server, to_client;
      MemoryStream raw(&to_server, &to_client);
      raw.feed(bytes, cuts);
      auto handshake = e.acceptor.accept(std::move(raw));
      (void)drive(handshake, cx);
      return 0;
    }
    Pipe to_server, to_client;
    auto client = e.connector.connect("localhost", MemoryStream(&to_client, &to_server));
    auto server = e.acceptor.accept(MemoryStream(&to_server, &to_client));
    std::optional<pollux::tls::TlsStream<MemoryStream>> c, s;
    for (int round = 0; round < 16 && (!c || !s); ++round) {
      if (!c) {
        auto got = client.poll(cx);
        if (got.is_ready()) c.emplace(std::move(got).value());
      }
      if (!s) {
        auto got = server.poll(cx);
        if (got.is_ready()) s.emplace(std::move(got).value());
      }
    }
    if (!c || !s) __builtin_trap();  // a real handshake in memory must finish
    std::string_view hello = "hello";
    (void)s->poll_write(cx, std::as_bytes(std::span(hello)));
    (void)s->poll_flush(cx);
    std::string records = to_client.bytes + std::string(bytes);  // the real record, then the fuzzer's
    c->get_ref().feed(records, cuts);
    for (int i = 0; i < 256; ++i) {
      auto got = c->poll_read(cx, buffer);
      if (got.is_pending() || got.value() == 0) break;
    }
  } catch (const std::system_error& error) {
    if (error.code().category() != pollux::tls::tls_category() && error.code().category() != std::generic_category()
        && error.code().category() != std::system_category()) {
      __builtin_trap();
    }
  }
  return 0;
}
