// UdpFramed: a UDP socket as a Stream of (frame, sender) and a Sink of
// (item, destination), one datagram per item (tokio-util's udp tests, in
// C++), and a bad datagram that must not end the stream.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <utility>

#include "support.hpp"

using namespace pollux;

namespace {

using LineDatagrams = UdpFramed<LinesCodec>;

std::string text(const LineDatagrams::Item& item) { return item.value().first; }

}  // namespace

TEST_CASE("each item sent goes out as one datagram to its address, and comes in with its sender") {
  auto rt = Runtime::current_thread();
  LineDatagrams a(UdpSocket::bind("127.0.0.1:0"), LinesCodec());
  LineDatagrams b(UdpSocket::bind("127.0.0.1:0"), LinesCodec());
  SocketAddr to_b = b.get_ref().local_addr();
  CHECK(rt.block_on(send(a, std::pair(std::string("hello"), to_b))));
  auto got = rt.block_on(next(b));
  REQUIRE(got);
  CHECK(text(*got) == "hello");
  CHECK(got->value().second == a.get_ref().local_addr());
}

TEST_CASE("every frame of one datagram is yielded, the last one without its newline too") {
  auto rt = Runtime::current_thread();
  auto raw = UdpSocket::bind("127.0.0.1:0");
  LineDatagrams framed(UdpSocket::bind("127.0.0.1:0"), LinesCodec());
  rt.block_on(raw.send_to(std::string_view("one\ntwo\nthree"), framed.get_ref().local_addr()));
  CHECK(text(*rt.block_on(next(framed))) == "one");
  CHECK(text(*rt.block_on(next(framed))) == "two");
  CHECK(text(*rt.block_on(next(framed))) == "three");  // the datagram's end ends the line
}

TEST_CASE("a bad datagram is an error for itself alone, and the next datagram decodes") {
  auto rt = Runtime::current_thread();
  auto raw = UdpSocket::bind("127.0.0.1:0");
  LineDatagrams framed(UdpSocket::bind("127.0.0.1:0"), LinesCodec(8));
  SocketAddr to = framed.get_ref().local_addr();
  rt.block_on(raw.send_to(std::string_view("far longer than eight bytes\n"), to));
  rt.block_on(raw.send_to(std::string_view("short\n"), to));
  auto bad = rt.block_on(next(framed));
  REQUIRE(bad);
  CHECK(!*bad);
  auto good = rt.block_on(next(framed));
  REQUIRE(good);
  CHECK(text(*good) == "short");
}

TEST_CASE("a receive that waits leaves no waker behind when the stream is polled no more and dropped") {
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  test::Probe probe;
  {
    LineDatagrams framed(UdpSocket::bind("127.0.0.1:0"), LinesCodec());
    CHECK(framed.poll_next(probe.cx).is_pending());
  }
  CHECK(probe.counts.live() == 1);
}

TEST_CASE("a UdpFramed gives its socket back, and sends with BytesCodec too") {
  auto rt = Runtime::current_thread();
  UdpFramed<BytesCodec> a(UdpSocket::bind("127.0.0.1:0"), BytesCodec());
  auto b = UdpSocket::bind("127.0.0.1:0");
  std::string payload(1000, 'x');
  CHECK(rt.block_on(send(a, std::pair(BytesBuf(std::string_view(payload)), b.local_addr()))));
  char buffer[2000];
  auto [n, from] = rt.block_on(b.recv_from(std::span<char>(buffer)));
  CHECK(n == payload.size());
  UdpSocket back = std::move(a).into_inner();
  CHECK(from == back.local_addr());
}

namespace {

// A decoder that refuses a datagram starting with 'X' without taking a byte.
struct Picky {
  using Item = std::string;
  using Error = FrameError;
  Result<std::optional<std::string>, FrameError> decode(BytesBuf& buffer) {
    if (buffer.empty()) return std::optional<std::string>();
    if (buffer[0] == std::byte{'X'}) return FrameError(std::make_error_code(std::errc::bad_message));
    std::string all = buffer.to_string();
    buffer.clear();
    return std::optional<std::string>(std::move(all));
  }
};

}  // namespace

TEST_CASE("a codec that fails a datagram without taking from it costs two errors, not a loop") {
  auto rt = Runtime::current_thread();
  auto raw = UdpSocket::bind("127.0.0.1:0");
  UdpFramed<Picky> framed(UdpSocket::bind("127.0.0.1:0"), Picky());
  SocketAddr to = framed.get_ref().local_addr();
  rt.block_on(raw.send_to(std::string_view("Xbad"), to));
  rt.block_on(raw.send_to(std::string_view("good"), to));
  CHECK(!*rt.block_on(next(framed)));
  CHECK(!*rt.block_on(next(framed)));
  auto good = rt.block_on(next(framed));
  REQUIRE(good);
  CHECK(good->value().first == "good");
}
