// tls VARIANT [N] CERT KEY CA: asio::ssl beside bench/tls.cpp, one
// io_context run by one thread, callback style.
//   handshake  N full TLS handshakes over loopback (no resumption), a TCP
//              connection each, client and server in this process
//   bulk       N MiB from client to server over one TLS connection, in
//              writes of 1 MiB
#include <asio.hpp>
#include <asio/ssl.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using asio::ip::tcp;
using Stream = asio::ssl::stream<tcp::socket>;

namespace {

void emit(const char* variant, std::uint64_t n, double seconds, const char* extra = "") {
  double ns = seconds * 1e9 / static_cast<double>(n);
  std::printf(
      "{\"bench\":\"tls\",\"impl\":\"asio\",\"variant\":\"%s\",\"n\":%llu,\"ns_per_op\":%.3f,\"ops_per_s\":%.3f%s}\n",
      variant, static_cast<unsigned long long>(n), ns, 1e9 / ns, extra);
}

struct Bench {
  asio::io_context io{1};
  asio::ssl::context server_ctx{asio::ssl::context::tls_server};
  asio::ssl::context client_ctx{asio::ssl::context::tls_client};
  tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};

  Bench(const char* cert, const char* key, const char* ca) {
    server_ctx.use_certificate_chain_file(cert);
    server_ctx.use_private_key_file(key, asio::ssl::context::pem);
    client_ctx.load_verify_file(ca);
    client_ctx.set_verify_mode(asio::ssl::verify_peer);
  }

  // Connects a client and a server and runs both handshakes; `done(client, server)` after.
  void pair(std::function<void(std::shared_ptr<Stream>, std::shared_ptr<Stream>)> done) {
    auto client = std::make_shared<Stream>(io, client_ctx);
    auto server = std::make_shared<Stream>(io, server_ctx);
    auto left = std::make_shared<int>(2);
    auto both = [client, server, left, done] {
      if (--*left == 0) done(client, server);
    };
    SSL_set_tlsext_host_name(client->native_handle(), "localhost");
    client->set_verify_callback(asio::ssl::host_name_verification("localhost"));
    acceptor.async_accept(server->lowest_layer(), [server, both](asio::error_code ec) {
      if (ec) std::abort();
      server->lowest_layer().set_option(tcp::no_delay(true));
      server->async_handshake(asio::ssl::stream_base::server, [both](asio::error_code ec) {
        if (ec) std::abort();
        both();
      });
    });
    client->lowest_layer().async_connect(acceptor.local_endpoint(), [client, both](asio::error_code ec) {
      if (ec) std::abort();
      client->lowest_layer().set_option(tcp::no_delay(true));
      client->async_handshake(asio::ssl::stream_base::client, [both](asio::error_code ec) {
        if (ec) std::abort();
        both();
      });
    });
  }

  void handshakes(std::uint64_t left, std::function<void()> done) {
    if (left == 0) return done();
    pair([this, left, done](auto, auto) { handshakes(left - 1, done); });
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: tls handshake|bulk N CERT KEY CA\n");
    return 2;
  }
  std::string variant = argv[1];
  std::uint64_t n = std::strtoull(argv[2], nullptr, 10);
  Bench b(argv[3], argv[4], argv[5]);
  using Clock = std::chrono::steady_clock;
  if (variant == "handshake") {
    b.handshakes(n / 10, [] {});
    b.io.run();
    b.io.restart();
    auto t0 = Clock::now();
    b.handshakes(n, [] {});
    b.io.run();
    emit("handshake", n, std::chrono::duration<double>(Clock::now() - t0).count());
  } else if (variant == "bulk") {
    std::vector<char> chunk(1 << 20, 'b'), sink(1 << 20);
    std::shared_ptr<Stream> client, server;
    b.pair([&](auto c, auto s) {
      client = c;
      server = s;
    });
    b.io.run();
    b.io.restart();
    auto transfer = [&](std::uint64_t mib) {
      auto sent = std::make_shared<std::uint64_t>(0);
      auto received = std::make_shared<std::uint64_t>(0);
      std::function<void()> send = [&, sent] {
        if ((*sent)++ == mib) return;
        asio::async_write(*client, asio::buffer(chunk), [&](asio::error_code ec, std::size_t) {
          if (ec) std::abort();
          send();
        });
      };
      std::function<void()> receive = [&, received] {
        if (*received >= mib << 20) return;
        server->async_read_some(asio::buffer(sink), [&, received](asio::error_code ec, std::size_t got) {
          if (ec) std::abort();
          *received += got;
          receive();
        });
      };
      send();
      receive();
      b.io.run();
      b.io.restart();
    };
    transfer(n / 10 + 1);
    auto t0 = Clock::now();
    transfer(n);
    double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    char extra[64];
    std::snprintf(extra, sizeof extra, ",\"mib_per_s\":%.3f", static_cast<double>(n) / seconds);
    emit("bulk", n, seconds, extra);
  } else {
    std::fprintf(stderr, "unknown variant '%s' (handshake, bulk)\n", variant.c_str());
    return 2;
  }
}
