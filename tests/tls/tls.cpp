// pollux::tls: handshakes and data between pollux's own two sides and
// against real peers (openssl s_server and s_client), each verification
// failure with its own error, close_notify and truncation, cancellation of
// writes at random points, garbage and early closes, resumption and ALPN.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <pollux/process.hpp>
#include <pollux/tls.hpp>

#include "io_support.hpp"
#include "support.hpp"
#include "tls_support.hpp"

using namespace pollux;
using namespace std::chrono_literals;
using namespace pollux::tls;

namespace {

TlsConfig server_config(const test::TestPki& pki) {
  return TlsConfig::server().certificate_chain_pem(pki.server.cert_pem).private_key_pem(pki.server.key_pem);
}

TlsConfig client_config(const test::TestPki& pki) { return TlsConfig::client().ca_pem(pki.ca.cert_pem); }

struct TlsPair {
  TlsStream<TcpStream> client;
  TlsStream<TcpStream> server;
};

TlsPair tls_pair(Runtime& rt, const TlsConnector& connector, const TlsAcceptor& acceptor,
                 const char* name = "localhost") {
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [c, s] = test::connect_pair(rt, listener);
  auto [client, server] = rt.block_on(join(connector.connect(name, std::move(c)), acceptor.accept(std::move(s))));
  return TlsPair{std::move(client), std::move(server)};
}

// The handshake of a client with `config` against a server of `pki`'s
// certificate `server`; the client's error code, or nothing when it succeeded.
std::error_code client_error(Runtime& rt, const TlsConfig& client, const TlsConfig& server, const char* name) {
  TlsConnector connector(client);
  TlsAcceptor acceptor(server);
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [c, s] = test::connect_pair(rt, listener);
  std::error_code error;
  rt.block_on(join(catch_exception(connector.connect(name, std::move(c))) | map([&](auto result) {
                     if (!result) {
                       try {
                         std::rethrow_exception(result.error());
                       } catch (const std::system_error& e) {
                         error = e.code();
                       }
                     }
                     return Unit{};
                   }),
                   catch_exception(acceptor.accept(std::move(s))) | map([](auto) { return Unit{}; })));
  return error;
}

// The port an `openssl s_server` child prints ("ACCEPT 127.0.0.1:PORT").
std::uint16_t read_accept_port(Runtime& rt, process::ChildStdout& out) {
  std::string seen;
  std::array<std::byte, 256> buffer{};
  while (seen.find('\n', seen.find("ACCEPT")) == std::string::npos || seen.find("ACCEPT") == std::string::npos) {
    std::size_t n = rt.block_on(timeout(10s, read(out, buffer))).value();
    REQUIRE(n > 0);
    seen.append(reinterpret_cast<const char*>(buffer.data()), n);
  }
  std::size_t colon = seen.find(':', seen.find("ACCEPT"));
  return static_cast<std::uint16_t>(std::stoi(seen.substr(colon + 1)));
}

std::span<const std::byte> bytes(std::string_view text) { return std::as_bytes(std::span(text)); }

}  // namespace

TEST_CASE("a pollux client and server exchange data and close with close_notify both ways") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  TlsConnector connector(client_config(pki));
  TlsAcceptor acceptor(server_config(pki));
  TlsPair pair = tls_pair(rt, connector, acceptor);
  auto& client = pair.client;
  auto& server = pair.server;
  CHECK(client.version() == "TLSv1.3");
  rt.block_on(write_all(client, bytes("ping")));
  rt.block_on(flush(client));
  std::array<std::byte, 4> got{};
  rt.block_on(read_exact(server, got));
  CHECK(std::memcmp(got.data(), "ping", 4) == 0);
  rt.block_on(shutdown(client));
  CHECK(rt.block_on(read(server, got)) == 0);  // a clean end: the client's close_notify
  rt.block_on(shutdown(server));
  CHECK(rt.block_on(read(client, got)) == 0);
}

TEST_CASE("close(grace) is Answered when the peer sends its close_notify back") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  TlsConnector connector(client_config(pki));
  TlsAcceptor acceptor(server_config(pki));
  TlsPair pair = tls_pair(rt, connector, acceptor);
  auto& client = pair.client;
  auto& server = pair.server;
  std::array<std::byte, 16> buffer{};
  auto answer = read(server, buffer) | then([&](std::size_t n) {
                  CHECK(n == 0);
                  return shutdown(server);
                });
  auto [outcome, unit] = rt.block_on(join(client.close(5s), std::move(answer)));
  CHECK(outcome == CloseOutcome::Answered);
}

TEST_CASE("close(grace) gives up after the grace when the peer never answers") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  TlsConnector connector(client_config(pki));
  TlsAcceptor acceptor(server_config(pki));
  TlsPair pair = tls_pair(rt, connector, acceptor);  // the server side is never polled again
  CHECK(rt.block_on(pair.client.close(50ms)) == CloseOutcome::PeerSilent);
}

TEST_CASE("a connection cut without close_notify reads as truncated, after the data that came") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  TlsConnector connector(client_config(pki));
  TlsAcceptor acceptor(server_config(pki));
  TlsPair pair = tls_pair(rt, connector, acceptor);
  auto& client = pair.client;
  auto& server = pair.server;
  rt.block_on(write_all(server, bytes("last words")));
  rt.block_on(flush(server));
  server.get_ref().close();  // the TCP connection ends; no close_notify
  std::string got;
  try {
    rt.block_on(read_to_end(client, got));
    FAIL("no error");
  } catch (const std::system_error& e) {
    CHECK(e.code() == tls_errc::truncated);
  }
  CHECK(got == "last words");
}

TEST_CASE("a certificate for another name fails with hostname_mismatch") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  CHECK(client_error(rt, client_config(pki), server_config(pki), "example.com") == tls_errc::hostname_mismatch);
  CHECK(client_error(rt, client_config(pki), server_config(pki), "127.0.0.2") == tls_errc::hostname_mismatch);
  CHECK_FALSE(client_error(rt, client_config(pki), server_config(pki), "127.0.0.1"));
}

TEST_CASE("a certificate from an unknown CA fails with unknown_ca") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  auto stranger =
      TlsConfig::server().certificate_chain_pem(pki.stranger.cert_pem).private_key_pem(pki.stranger.key_pem);
  CHECK(client_error(rt, client_config(pki), stranger, "localhost") == tls_errc::unknown_ca);
  auto no_ca = TlsConfig::client().ca_pem(pki.stranger.cert_pem);  // trusts only someone else
  CHECK(client_error(rt, no_ca, server_config(pki), "localhost") == tls_errc::unknown_ca);
}

TEST_CASE("an expired certificate fails with certificate_expired") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  auto expired = TlsConfig::server().certificate_chain_pem(pki.expired.cert_pem).private_key_pem(pki.expired.key_pem);
  CHECK(client_error(rt, client_config(pki), expired, "localhost") == tls_errc::certificate_expired);
}

TEST_CASE("verification off accepts any certificate") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  auto stranger =
      TlsConfig::server().certificate_chain_pem(pki.stranger.cert_pem).private_key_pem(pki.stranger.key_pem);
  CHECK_FALSE(client_error(rt, TlsConfig::client().verify_peer(false), stranger, "example.com"));
}

TEST_CASE("a client that speaks only TLS 1.0 fails the server's handshake with protocol_version") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  TlsAcceptor acceptor(server_config(pki));  // TLS 1.2 or later
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto client = process::Command("openssl")
                    .arg("s_client")
                    .arg("-connect")
                    .arg("127.0.0.1:" + std::to_string(listener.local_addr().port()))
                    .arg("-tls1")
                    .arg("-cipher")
                    .arg("DEFAULT@SECLEVEL=0")
                    .stdin_from(process::Stdio::Null)
                    .stdout_to(process::Stdio::Null)
                    .stderr_to(process::Stdio::Null)
                    .kill_on_drop(true)
                    .spawn();
  auto [tcp, peer] = rt.block_on(listener.accept());
  try {
    (void)rt.block_on(timeout(10s, acceptor.accept(std::move(tcp))));
    FAIL("no error");
  } catch (const std::system_error& e) {
    CHECK(e.code() == tls_errc::protocol_version);
  }
  CHECK_FALSE(rt.block_on(client.wait()).success());
}

TEST_CASE("a pollux client talks to openssl s_server") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  auto server = process::Command("openssl")
                    .arg("s_server")
                    .arg("-accept")
                    .arg("127.0.0.1:0")
                    .arg("-naccept")
                    .arg("1")
                    .arg("-rev")
                    .arg("-cert")
                    .arg(pki.file("server.pem"))
                    .arg("-key")
                    .arg(pki.file("server.key"))
                    .stdin_from(process::Stdio::Null)
                    .stdout_to(process::Stdio::Piped)
                    .stderr_to(process::Stdio::Null)
                    .kill_on_drop(true)
                    .spawn();
  auto out = server.take_stdout();
  std::uint16_t port = read_accept_port(rt, *out);
  TlsConnector connector(client_config(pki));
  auto tcp = rt.block_on(TcpStream::connect(SocketAddr::parse("127.0.0.1:" + std::to_string(port))));
  auto stream = rt.block_on(connector.connect("localhost", std::move(tcp)));
  rt.block_on(write_all(stream, bytes("hello pollux\n")));
  rt.block_on(flush(stream));
  std::array<std::byte, 13> got{};
  rt.block_on(timeout(10s, read_exact(stream, got))).value();
  CHECK(std::string(reinterpret_cast<const char*>(got.data()), got.size()) == "xullop olleh\n");
  rt.block_on(shutdown(stream));
}

TEST_CASE("openssl s_client talks to a pollux server and sees its close_notify") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  TlsAcceptor acceptor(server_config(pki));
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto client = process::Command("openssl")
                    .arg("s_client")
                    .arg("-connect")
                    .arg("127.0.0.1:" + std::to_string(listener.local_addr().port()))
                    .arg("-CAfile")
                    .arg(pki.file("ca.pem"))
                    .arg("-verify_return_error")
                    .arg("-servername")
                    .arg("localhost")
                    .arg("-msg")
                    .stdin_from(process::Stdio::Piped)
                    .stdout_to(process::Stdio::Piped)
                    .stderr_to(process::Stdio::Piped)
                    .kill_on_drop(true)
                    .spawn();
  auto in = client.take_stdin();
  auto out = client.take_stdout();
  auto [tcp, peer] = rt.block_on(listener.accept());
  auto stream = rt.block_on(timeout(10s, acceptor.accept(std::move(tcp)))).value();
  rt.block_on(write_all(*in, bytes("from s_client\n")));
  std::array<std::byte, 14> got{};
  rt.block_on(timeout(10s, read_exact(stream, got))).value();
  CHECK(std::string(reinterpret_cast<const char*>(got.data()), got.size()) == "from s_client\n");
  rt.block_on(write_all(stream, bytes("from pollux\n")));
  rt.block_on(shutdown(stream));  // close_notify
  std::string printed;
  rt.block_on(timeout(10s, read_to_end(*out, printed))).value();
  CHECK(printed.find("from pollux") != std::string::npos);
  CHECK(printed.find("close_notify") != std::string::npos);
  in.reset();
  CHECK(rt.block_on(client.wait()).success());
}

TEST_CASE("writes abandoned at random points leave the stream whole: the peer reads exactly what was taken") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  TlsConnector connector(client_config(pki));
  TlsAcceptor acceptor(server_config(pki));
  TlsPair pair = tls_pair(rt, connector, acceptor);
  auto& client = pair.client;
  auto& server = pair.server;
  std::mt19937 rng(9);
  std::string taken;
  std::vector<std::byte> chunk(100000);
  std::string received;
  std::array<std::byte, 65536> buffer{};
  for (int round = 0; round < 300; ++round) {
    for (auto& b : chunk) b = static_cast<std::byte>('a' + rng() % 26);
    std::size_t size = rng() % chunk.size() + 1;
    {
      auto write_once = write(client, std::span(chunk).first(size));
      auto polled = test::poll_once(write_once);
      if (polled.is_ready()) taken.append(reinterpret_cast<const char*>(chunk.data()), polled.value());
    }                      // destroyed whether it was Ready or Pending
    if (rng() % 4 == 0) {  // now and then the peer reads what is there, so the writer sees both states
      for (;;) {
        auto reading = read(server, buffer);
        auto got = test::poll_once(reading);
        if (got.is_pending() || got.value() == 0) break;
        received.append(reinterpret_cast<const char*>(buffer.data()), got.value());
      }
    }
  }
  std::string rest;
  (void)rt.block_on(join(shutdown(client), read_to_end(server, rest)));
  received += rest;
  CHECK(received.size() == taken.size());
  CHECK(received == taken);
}

TEST_CASE("garbage instead of a ClientHello fails the server's handshake, nothing else") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  TlsAcceptor acceptor(server_config(pki));
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [c, s] = test::connect_pair(rt, listener);
  rt.block_on(write_all(c, bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n")));
  try {
    (void)rt.block_on(acceptor.accept(std::move(s)));
    FAIL("no error");
  } catch (const std::system_error& e) {
    CHECK(e.code().category() == tls_category());
  }
}

TEST_CASE("a client that closes mid-handshake fails the server's handshake with closed_in_handshake") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  TlsAcceptor acceptor(server_config(pki));
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [c, s] = test::connect_pair(rt, listener);
  c.close();
  try {
    (void)rt.block_on(acceptor.accept(std::move(s)));
    FAIL("no error");
  } catch (const std::system_error& e) {
    CHECK(e.code() == tls_errc::closed_in_handshake);
  }
}

TEST_CASE("a second connection to the same name resumes the session") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  TlsConnector connector(client_config(pki));
  TlsAcceptor acceptor(server_config(pki));
  for (int i = 0; i < 2; ++i) {
    TlsPair pair = tls_pair(rt, connector, acceptor);
    auto& client = pair.client;
    auto& server = pair.server;
    CHECK(client.session_reused() == (i == 1));
    // TLS 1.3 tickets come after the handshake: the client reads them with the first data.
    rt.block_on(write_all(server, bytes("x")));
    rt.block_on(flush(server));
    std::array<std::byte, 1> one{};
    rt.block_on(read_exact(client, one));
    rt.block_on(join(shutdown(client), shutdown(server)));
  }
}

TEST_CASE("ALPN picks the server's first protocol the client offers") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  TlsConnector connector(client_config(pki).alpn({"h2", "http/1.1"}));
  TlsAcceptor acceptor(server_config(pki).alpn({"http/1.1"}));
  TlsPair pair = tls_pair(rt, connector, acceptor);
  auto& client = pair.client;
  auto& server = pair.server;
  CHECK(client.alpn_protocol() == "http/1.1");
  CHECK(server.alpn_protocol() == "http/1.1");
}

TEST_CASE("a configuration that cannot be used is bad_config, naming what is wrong") {
  test::TestPki pki;
  try {
    TlsAcceptor acceptor(
        TlsConfig::server().certificate_chain_pem("not a certificate").private_key_pem(pki.server.key_pem));
    FAIL("no error");
  } catch (const std::system_error& e) {
    CHECK(e.code() == tls_errc::bad_config);
    CHECK(std::string(e.what()).find("certificate_chain_pem") != std::string::npos);
  }
  CHECK_THROWS_AS(TlsAcceptor{TlsConfig::server()}, std::system_error);  // no certificate
  CHECK_THROWS_AS(
      TlsAcceptor(TlsConfig::server().certificate_chain_pem(pki.server.cert_pem).private_key_pem(pki.stranger.key_pem)),
      std::system_error);  // the key of another certificate
  CHECK_THROWS_AS(TlsConnector(TlsConfig::client().ca_file("/nonexistent/ca.pem")), std::system_error);
  CHECK_THROWS_AS(TlsConnector(server_config(pki)), std::invalid_argument);
}

TEST_CASE("1 MiB written in one write_all arrives whole, in order") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  TlsConnector connector(client_config(pki));
  TlsAcceptor acceptor(server_config(pki));
  TlsPair pair = tls_pair(rt, connector, acceptor);
  auto& client = pair.client;
  auto& server = pair.server;
  std::string data(1 << 20, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  std::string back;
  auto send = write_all(client, bytes(data)) | then([&] { return shutdown(client); });
  (void)rt.block_on(join(std::move(send), read_to_end(server, back)));
  CHECK(back == data);
}

TEST_CASE("split halves read and write at once from two tasks on two threads, 4 MiB each way") {
  test::TestPki pki;
  auto rt = Runtime::multi_thread(2);
  TlsConnector connector(client_config(pki));
  TlsAcceptor acceptor(server_config(pki));
  TlsPair pair = tls_pair(rt, connector, acceptor);
  auto server_halves = split(std::move(pair.server));
  auto& server_read = server_halves.first;
  auto& server_write = server_halves.second;
  auto client_halves = split(std::move(pair.client));
  auto& client_read = client_halves.first;
  auto& client_write = client_halves.second;
  std::string data(4 << 20, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 13 + i / 4096);
  // More than the sockets hold: only halves that run at once get through.
  std::string back;
  auto echo = rt.spawn(copy(server_read, server_write) | then([&](std::uint64_t) { return shutdown(server_write); }));
  auto send = rt.spawn(write_all(client_write, bytes(data)) | then([&] { return shutdown(client_write); }));
  auto receive = rt.spawn(read_to_end(client_read, back));
  rt.block_on(timeout(60s, join(std::move(echo), std::move(send), std::move(receive)))).value();
  CHECK(back == data);
}

TEST_CASE("a read half that must send keeps the write half's wake-up on the same socket") {
  // The write half waits for room in the socket; the read half, polled
  // next, must send the records the write left queued, and waits for
  // room too. The room that comes must wake both tasks: with one waker
  // per direction in the socket, the second would replace the first.
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  TlsConnector connector(client_config(pki));
  TlsAcceptor acceptor(server_config(pki));
  TlsPair pair = tls_pair(rt, connector, acceptor);
  auto client_halves = split(std::move(pair.client));
  auto& client_read = client_halves.first;
  auto& client_write = client_halves.second;
  std::string data(8 << 20, 'w');
  auto writer = rt.spawn(write_all(client_write, bytes(data)) | then([&] { return flush(client_write); }));
  std::array<std::byte, 16> scratch{};
  auto reader = rt.spawn(read(client_read, scratch));
  rt.block_on(yield_now());  // the writer fills the socket, then the reader waits on it too
  rt.block_on(yield_now());
  std::string got;
  got.reserve(data.size());
  std::array<std::byte, 65536> buffer{};
  while (got.size() < data.size()) {  // the peer reads: room comes
    std::size_t n = rt.block_on(timeout(20s, read(pair.server, buffer))).value();
    REQUIRE(n > 0);
    got.append(reinterpret_cast<const char*>(buffer.data()), n);
  }
  rt.block_on(timeout(20s, std::move(writer))).value();
  CHECK(got == data);
  rt.block_on(write_all(pair.server, bytes("x")));
  rt.block_on(flush(pair.server));
  CHECK(rt.block_on(timeout(20s, std::move(reader))).value() == 1);
}

TEST_CASE("a half's future destroyed while it waits leaves the other half working, and reunite gives the stream back") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  TlsConnector connector(client_config(pki));
  TlsAcceptor acceptor(server_config(pki));
  TlsPair pair = tls_pair(rt, connector, acceptor);
  auto client_halves = split(std::move(pair.client));
  auto& client_read = client_halves.first;
  auto& client_write = client_halves.second;
  {
    std::array<std::byte, 16> scratch{};
    auto waiting = read(client_read, scratch);
    CHECK(test::poll_once(waiting).is_pending());
  }  // destroyed while it waited for the socket
  rt.block_on(write_all(client_write, bytes("ping")));
  rt.block_on(flush(client_write));
  std::array<std::byte, 4> got{};
  rt.block_on(read_exact(pair.server, got));
  CHECK(std::memcmp(got.data(), "ping", 4) == 0);
  TlsStream<TcpStream> whole = reunite(std::move(client_read), std::move(client_write));
  rt.block_on(write_all(pair.server, bytes("pong")));
  rt.block_on(flush(pair.server));
  rt.block_on(read_exact(whole, got));
  CHECK(std::memcmp(got.data(), "pong", 4) == 0);
}

TEST_CASE("halves of two different streams do not reunite") {
  test::TestPki pki;
  auto rt = Runtime::current_thread();
  TlsConnector connector(client_config(pki));
  TlsAcceptor acceptor(server_config(pki));
  TlsPair first = tls_pair(rt, connector, acceptor);
  TlsPair second = tls_pair(rt, connector, acceptor);
  auto first_halves = split(std::move(first.client));
  auto second_halves = split(std::move(second.client));
  CHECK_THROWS_AS(reunite(std::move(first_halves.first), std::move(second_halves.second)), std::invalid_argument);
}
