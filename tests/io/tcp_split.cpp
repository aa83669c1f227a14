// TcpStream's halves (split and into_split), copy_bidirectional as a
// proxy, lines over a socket, peek, vectored writes and connecting from
// text, over loopback connections.
#include <doctest/doctest.h>

#include <string>
#include <type_traits>

#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;

namespace {
std::span<const char> text(const std::string& s) { return std::span<const char>(s.data(), s.size()); }

// Reads to the end of the stream, as a future of the bytes.
template <class R>
auto read_all(R& reader) {
  return poll_fn<std::string>([&reader, out = std::string(), reading = std::optional<ReadToEnd<R, std::string>>()](
                                  Context& cx) mutable -> Poll<std::string> {
    if (!reading) reading.emplace(reader, out);
    if (reading->poll(cx).is_pending()) return pending;
    return ready(std::move(out));
  });
}
}  // namespace

TEST_CASE("split halves read and write at once from two futures of one task") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  auto [reader, writer] = server.split();
  std::string ping = "ping", pong = "pong";
  char got_server[4], got_client[4];
  rt.block_on(join(reader.read_exact(std::span<char>(got_server)), writer.write_all(text(pong)),
                   client.write_all(text(ping)), client.read_exact(std::span<char>(got_client))));
  CHECK(std::string(got_server, 4) == "ping");
  CHECK(std::string(got_client, 4) == "pong");
}

TEST_CASE("owned halves work from two tasks, and the write half shuts the writing down when it goes") {
  auto rt = Runtime::multi_thread(2);
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  auto [reader, writer] = std::move(server).into_split();
  auto writing =
      rt.spawn(lazy([w = std::move(writer)]() mutable { return std::make_shared<OwnedTcpWriteHalf>(std::move(w)); })
               | then([](std::shared_ptr<OwnedTcpWriteHalf> w) {
                   static const std::string hello = "hello";
                   return w->write_all(text(hello)) | map([w] {});  // w goes with the future
                 }));
  rt.block_on(std::move(writing)).value();
  CHECK(rt.block_on(read_all(client)) == "hello");  // the end came: the write half is gone
  std::string back = "back";
  char got[4];
  rt.block_on(join(client.write_all(text(back)), reader.read_exact(std::span<char>(got))));
  CHECK(std::string(got, 4) == "back");
}

TEST_CASE("owned halves are move-only, so two readers can never share one socket") {
  CHECK_FALSE(std::is_copy_constructible_v<OwnedTcpReadHalf>);
  CHECK_FALSE(std::is_copy_assignable_v<OwnedTcpReadHalf>);
  CHECK_FALSE(std::is_copy_constructible_v<OwnedTcpWriteHalf>);
  CHECK(std::is_nothrow_move_constructible_v<OwnedTcpReadHalf>);
  CHECK(std::is_nothrow_move_constructible_v<OwnedTcpWriteHalf>);
}

TEST_CASE("reunite gives the stream back from its two owned halves, and refuses another stream's half") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [a, b] = test::connect_pair(rt, listener);
  auto [c, d] = test::connect_pair(rt, listener);
  auto [a_read, a_write] = std::move(a).into_split();
  auto [c_read, c_write] = std::move(c).into_split();
  CHECK_FALSE(a_write.reunite(c_read).has_value());
  auto whole = a_write.reunite(a_read);
  REQUIRE(whole.has_value());
  std::string hi = "hi";
  char got[2];
  rt.block_on(join(whole->write_all(text(hi)), b.read_exact(std::span<char>(got))));
  CHECK(std::string(got, 2) == "hi");
}

TEST_CASE("copy_bidirectional proxies both ways and passes each end of stream through") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [user, proxy_in] = test::connect_pair(rt, listener);
  auto [proxy_out, upstream] = test::connect_pair(rt, listener);
  std::string request = "request", response(100000, 'r');
  auto proxy = copy_bidirectional(proxy_in, proxy_out);
  auto user_side = join(user.write_all(text(request)) | map([&user = user] { user.shutdown(); }), read_all(user));
  auto upstream_side = join(upstream.write_all(text(response)) | map([&upstream = upstream] { upstream.shutdown(); }),
                            read_all(upstream));
  auto [copied, users, upstreams] = rt.block_on(join(std::move(proxy), std::move(user_side), std::move(upstream_side)));
  CHECK(copied == std::pair<std::uint64_t, std::uint64_t>(request.size(), response.size()));
  CHECK(std::get<1>(users) == response);
  CHECK(std::get<1>(upstreams) == request);
}

TEST_CASE("lines over a socket yields each line as it comes") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  std::string sent = "first\r\nsecond\nthird";
  auto received = rt.block_on(join(client.write_all(text(sent)) | map([&client = client] { client.shutdown(); }),
                                   lines(std::move(server)) | collect()));
  CHECK(std::get<1>(received) == std::vector<std::string>{"first", "second", "third"});
}

TEST_CASE("peek shows the queued bytes and leaves them for the next read") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  std::string hey = "hey";
  rt.block_on(client.write_all(text(hey)));
  std::byte peeked[3];
  char got[3];
  CHECK(rt.block_on(server.peek(peeked)) >= 1u);
  rt.block_on(server.read_exact(std::span<char>(got)));
  CHECK(std::string(got, 3) == "hey");
  CHECK(peeked[0] == std::byte{'h'});
}

TEST_CASE("a vectored write sends its buffers in order in one call") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  std::string a = "ab", b = "", c = "cde";
  std::span<const std::byte> parts[] = {std::as_bytes(text(a)), std::as_bytes(text(b)), std::as_bytes(text(c))};
  auto written = rt.block_on(client.write_vectored(parts));
  CHECK(written == 5u);
  char got[5];
  rt.block_on(server.read_exact(std::span<char>(got)));
  CHECK(std::string(got, 5) == "abcde");
}

TEST_CASE("connect takes an address as text, and bad text is a clear error at once") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto stream = rt.block_on(TcpStream::connect(listener.local_addr().to_string()));
  CHECK(stream.peer_addr() == listener.local_addr());
  CHECK_THROWS_AS((void)TcpStream::connect("not an address"), std::invalid_argument);
  CHECK_THROWS_AS((void)TcpStream::connect("localhost:http"), std::invalid_argument);
  CHECK_THROWS_AS((void)TcpStream::connect("localhost:70000"), std::invalid_argument);
}

TEST_CASE("connect resolves a host name on the blocking pool and connects") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  std::string name = "localhost:" + std::to_string(listener.local_addr().port());
  auto [stream, accepted] = rt.block_on(join(TcpStream::connect(name), listener.accept()));
  CHECK(stream.peer_addr() == listener.local_addr());
}

TEST_CASE("lookup_host gives a numeric address at once and a name's addresses through the resolver") {
  auto rt = Runtime::current_thread();
  CHECK(rt.block_on(lookup_host("127.0.0.1:80")) == std::vector<SocketAddr>{SocketAddr::parse("127.0.0.1:80")});
  auto local = rt.block_on(lookup_host("localhost:80"));
  REQUIRE_FALSE(local.empty());
  CHECK(local.front().port() == 80);
}

TEST_CASE("a listener's incoming stream yields each accepted connection") {
  auto rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto addr = listener.local_addr();
  auto [streams, clients] =
      rt.block_on(join(listener.incoming() | take(3) | collect(),
                       join(TcpStream::connect(addr), TcpStream::connect(addr), TcpStream::connect(addr))));
  CHECK(streams.size() == 3u);
}
