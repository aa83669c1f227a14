// asio::ssl through use_future: a TLS handshake, a write and a read over
// loopback, awaited from pollux on both runtimes, with the io_context run
// by a thread of its own; and the hostile peer that never reads, whose
// pending write a destroyed future cancels.
#include <doctest/doctest.h>

#include <asio.hpp>
#include <asio/ssl.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <pollux/interop/asio.hpp>
#include <pollux/interop/coroutine.hpp>
#include <pollux/pollux.hpp>

#include "asio_support.hpp"
#include "support.hpp"
#include "tls_support.hpp"

using namespace pollux;
using namespace std::chrono_literals;
using asio::ip::tcp;
using test::AsioThread;
using test::runtimes;

namespace {

using SslStream = asio::ssl::stream<tcp::socket>;

Coro<std::string> serve(tcp::acceptor& acceptor, asio::ssl::context& context) {
  auto accepted = co_await acceptor.async_accept(use_future);
  REQUIRE(accepted.has_value());
  SslStream stream(std::move(accepted).value(), context);
  REQUIRE((co_await stream.async_handshake(asio::ssl::stream_base::server, use_future)).has_value());
  std::string text(5, '\0');
  auto n = co_await asio::async_read(stream, asio::buffer(text), use_future);
  REQUIRE(n.has_value());
  REQUIRE((co_await asio::async_write(stream, asio::buffer(text), use_future)).has_value());
  co_return text;
}

Coro<std::string> call(asio::io_context& ioc, tcp::endpoint server, asio::ssl::context& context) {
  SslStream stream(ioc, context);
  REQUIRE((co_await stream.next_layer().async_connect(server, use_future)).has_value());
  REQUIRE((co_await stream.async_handshake(asio::ssl::stream_base::client, use_future)).has_value());
  REQUIRE((co_await asio::async_write(stream, asio::buffer(std::string_view("hello")), use_future)).has_value());
  std::string echoed(5, '\0');
  REQUIRE((co_await asio::async_read(stream, asio::buffer(echoed), use_future)).has_value());
  co_return echoed;
}

}  // namespace

TEST_CASE("an asio::ssl handshake, write and read over loopback are pollux futures on both runtimes") {
  test::TestPki pki;
  asio::ssl::context server_context(asio::ssl::context::tls_server);
  server_context.use_certificate_chain_file(pki.file("server.pem"));
  server_context.use_private_key_file(pki.file("server.key"), asio::ssl::context::pem);
  asio::ssl::context client_context(asio::ssl::context::tls_client);
  client_context.load_verify_file(pki.file("ca.pem"));
  client_context.set_verify_mode(asio::ssl::verify_peer);
  AsioThread asio_thread;
  for (auto& rt : runtimes()) {
    tcp::acceptor acceptor(asio_thread.ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    auto [served, echoed] = rt.block_on(
        join(serve(acceptor, server_context), call(asio_thread.ioc, acceptor.local_endpoint(), client_context)));
    CHECK(served == "hello");
    CHECK(echoed == "hello");
  }
}

TEST_CASE("a write to a peer that never reads waits, and its destroyed future cancels it") {
  AsioThread asio_thread;
  for (auto& rt : runtimes()) {
    tcp::acceptor acceptor(asio_thread.ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    tcp::socket writer(asio_thread.ioc);
    writer.connect(acceptor.local_endpoint());
    tcp::socket never_reads = acceptor.accept();
    std::vector<char> flood(64 << 20, 'x');  // far beyond both socket buffers
    auto write = asio::async_write(writer, asio::buffer(flood), use_future);
    bool gave_up = !rt.block_on(timeout(50ms, std::move(write))).has_value();
    CHECK(gave_up);  // the peer never read: the write could not end
    // The cancelled write let go of the socket: a close (on the io_context's
    // thread, after the cancellation posted there) is clean, and nothing
    // keeps the io_context running.
    asio::error_code ec;
    asio::post(asio_thread.ioc, [&] { writer.close(ec); });
    CHECK(rt.block_on(asio::post(asio_thread.ioc, use_future)).has_value());  // after the close
    CHECK_FALSE(ec);
  }
  CHECK(asio_thread.finish());
}
