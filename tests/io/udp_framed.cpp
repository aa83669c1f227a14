// UdpFramed: a UDP socket as a Stream of (frame, sender) and a Sink of
// (item, destination), one datagram per item (tokio-util's udp tests, in
// C++), and a bad datagram that must not end the stream.
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>
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

TEST_CASE("a flood of good, over-long and oversized datagrams is decoded one datagram at a time, never mixed") {
  // A sender on another thread sends 20,000 datagrams as fast as it can:
  // good lines, lines over the codec's limit, and datagrams of UDP's
  // largest size. The kernel drops what the receiver's queue cannot hold;
  // what arrives must decode datagram by datagram (no line made of two),
  // each bad one an error of its own, and the stream must go on after.
  auto rt = Runtime::current_thread();
  LineDatagrams framed(UdpSocket::bind("127.0.0.1:0"), LinesCodec(64));
  SocketAddr to = framed.get_ref().local_addr();
  constexpr int kDatagrams = 20'000;
  std::atomic<bool> heard_end{false};
  std::thread sender([to, &heard_end] {
    auto send_rt = Runtime::current_thread();
    auto raw = UdpSocket::bind("127.0.0.1:0");
    std::string huge(65'507, 'h');
    std::string over_long(200, 'o');
    for (int i = 0; i < kDatagrams; ++i) {
      std::string good = "n:" + std::to_string(i) + "\n";
      std::string_view datagram = i % 10 == 3 ? std::string_view(huge) : i % 10 == 7 ? over_long : good;
      send_rt.block_on(raw.send_to(datagram, to));
    }
    // A full queue drops the newest datagram: "end" goes until it is heard.
    while (!heard_end.load()) {
      send_rt.block_on(raw.send_to(std::string_view("end\n"), to));
      send_rt.block_on(sleep(std::chrono::milliseconds(10)));
    }
  });
  struct StopSender {  // also when a check below fails: the sender ends
    std::atomic<bool>& heard_end;
    std::thread& sender;
    ~StopSender() {
      heard_end.store(true);
      sender.join();
    }
  } stop{heard_end, sender};
  int good = 0, bad = 0;
  bool ended = false;
  while (!ended) {
    auto item = rt.block_on(timeout(std::chrono::seconds(10), next(framed)));
    REQUIRE(item.has_value());
    REQUIRE(item.value());
    if (!*item.value()) {
      ++bad;
      continue;
    }
    std::string line = text(*item.value());
    if (line == "end") {
      ended = true;
      heard_end.store(true);
    } else {
      REQUIRE(line.starts_with("n:"));
      CHECK(line.find_first_not_of("0123456789", 2) == std::string::npos);
      ++good;
    }
  }
  CHECK(good <= kDatagrams * 8 / 10);
  MESSAGE(good << " good and " << bad << " bad datagrams of " << kDatagrams << " arrived");
}
