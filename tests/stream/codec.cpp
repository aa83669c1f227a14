// Codecs and Framed: frames split across reads, many frames in one read,
// frames larger than the buffer, limits a peer cannot push past, and the
// rule that an error is the last item of a connection's stream.
#include <doctest/doctest.h>

#include <cerrno>
#include <random>
#include <string>
#include <vector>

#include "codec_support.hpp"
#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;

namespace {

std::shared_ptr<test::Script> script_of(std::vector<std::string> chunks, bool ended) {
  auto script = std::make_shared<test::Script>();
  for (auto& chunk : chunks) script->chunks.push_back(std::move(chunk));
  script->ended = ended;
  return script;
}

template <class Codec>
std::vector<std::string> frames_as_text(std::vector<Result<typename Codec::Item, FrameError>>& items) {
  std::vector<std::string> out;
  for (auto& item : items) {
    REQUIRE(item.has_value());
    if constexpr (std::is_same_v<typename Codec::Item, std::string>) {
      out.push_back(item.value());
    } else {
      out.push_back(item.value().to_string());
    }
  }
  return out;
}

std::string length_prefixed(std::string_view body) {
  std::string frame(4, '\0');
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>((body.size() >> (8 * (3 - i))) & 0xff);
  return frame + std::string(body);
}

// The frames a codec finds in `bytes` fed as `chunks` (sizes), then the end.
template <class Codec>
std::vector<std::string> decode_in_chunks(Codec codec, const std::string& bytes, std::mt19937& rng) {
  std::vector<std::string> chunks;
  for (std::size_t at = 0; at < bytes.size();) {
    std::size_t n = std::uniform_int_distribution<std::size_t>(1, 64)(rng);
    chunks.push_back(bytes.substr(at, n));
    at += n;
  }
  FramedRead framed(test::ScriptedIo(script_of(chunks, true)), std::move(codec));
  auto items = test::drain(framed);
  return frames_as_text<Codec>(items);
}

}  // namespace

TEST_CASE("a BytesBuf splits a frame off the front without moving the bytes behind it") {
  BytesBuf buffer(std::string_view("frame one|the rest"));
  const std::byte* rest = buffer.bytes().data() + 10;
  BytesBuf frame = buffer.split_to(10);
  CHECK(frame == "frame one|");
  CHECK(buffer == "the rest");
  CHECK(buffer.bytes().data() == rest);
}

TEST_CASE("a BytesBuf reuses the room its consumed bytes left before it grows") {
  BytesBuf buffer;
  buffer.reserve(100);
  std::size_t capacity = buffer.capacity();
  for (int round = 0; round < 1000; ++round) {
    buffer.append(std::string(capacity / 2 - 1, 'x'));
    buffer.consume(capacity / 2 - 1);
  }
  CHECK(buffer.capacity() == capacity);
}

TEST_CASE("a BytesBuf reads into its spare room and commits only what was written") {
  BytesBuf buffer(std::string_view("ab"));
  buffer.reserve(3);
  REQUIRE(buffer.spare().size() >= 3);
  std::memcpy(buffer.spare().data(), "cde", 3);
  buffer.commit(2);
  CHECK(buffer == "abcd");
}

TEST_CASE("a BytesBuf asked to outgrow memory throws length_error and keeps its bytes") {
  BytesBuf buffer(std::string_view("kept"));
  CHECK_THROWS_AS(buffer.reserve(SIZE_MAX - 2), std::length_error);
  CHECK(buffer == "kept");
  CHECK_THROWS_AS(buffer.split_to(5), std::out_of_range);
}

TEST_CASE("read_buf appends one read to a BytesBuf and gives 0 at the end") {
  auto script = script_of({"hello ", "world"}, true);
  test::ScriptedIo io(script);
  BytesBuf buffer;
  for (std::size_t expected : {6u, 5u, 0u}) {
    auto read = read_buf(io, buffer);
    auto got = test::poll_once(read);
    REQUIRE(got.is_ready());
    CHECK(got.value() == expected);
  }
  CHECK(buffer == "hello world");
}

TEST_CASE("LinesCodec joins a line that arrives one byte per read") {
  std::vector<std::string> chunks;
  for (char c : std::string("one\r\ntwo\n")) chunks.emplace_back(1, c);
  FramedRead framed(test::ScriptedIo(script_of(chunks, true)), LinesCodec());
  auto items = test::drain(framed);
  CHECK(frames_as_text<LinesCodec>(items) == std::vector<std::string>{"one", "two"});
}

TEST_CASE("LinesCodec gives every line of one read, and the last line without its newline at the end") {
  bool ended = false;
  FramedRead framed(test::ScriptedIo(script_of({"a\nbb\n\nccc"}, true)), LinesCodec());
  auto items = test::drain(framed, &ended);
  CHECK(frames_as_text<LinesCodec>(items) == std::vector<std::string>{"a", "bb", "", "ccc"});
  CHECK(ended);
}

TEST_CASE("LinesCodec accepts a line of exactly its maximum and rejects one byte more") {
  LinesCodec codec(8);
  BytesBuf at_limit(std::string_view("12345678\r\n"));
  auto line = codec.decode(at_limit);
  REQUIRE(line);
  CHECK(*line.value() == "12345678");
  BytesBuf over(std::string_view("123456789\n"));
  auto too_long = codec.decode(over);
  REQUIRE_FALSE(too_long);
  CHECK(too_long.error().kind() == FrameError::Kind::TooLong);
}

TEST_CASE("LinesCodec reports an endless line before buffering more than its maximum and one read") {
  auto script = std::make_shared<test::Script>();
  for (int i = 0; i < 1000; ++i) script->chunks.push_back(std::string(1000, 'x'));
  FramedRead framed(test::ScriptedIo(script), LinesCodec(4096));
  bool ended = false;
  auto items = test::drain(framed, &ended);
  REQUIRE(items.size() == 1);
  REQUIRE_FALSE(items[0]);
  CHECK(items[0].error().kind() == FrameError::Kind::TooLong);
  CHECK(ended);
  CHECK(framed.read_buffer().capacity() <= 4096 + 2 * detail::kFrameReadChunk);
  CHECK(script->chunks.size() > 990);  // it stopped reading at once
}

TEST_CASE("LinesCodec searches each byte once however a long line arrives") {
  // A 60 KB line in 1-byte reads: a codec that searched from the front on
  // every read would look at 1.8 billion bytes; this one finishes at once.
  std::vector<std::string> chunks(60000, "y");
  chunks.push_back("\n");
  FramedRead framed(test::ScriptedIo(script_of(chunks, true)), LinesCodec());
  auto items = test::drain(framed);
  REQUIRE(items.size() == 1);
  CHECK(items[0].value().size() == 60000);
}

TEST_CASE("LengthDelimitedCodec joins a header and a body split across reads") {
  std::string bytes = length_prefixed("hello") + length_prefixed("") + length_prefixed("world!");
  std::vector<std::string> chunks;
  for (char c : bytes) chunks.emplace_back(1, c);
  FramedRead framed(test::ScriptedIo(script_of(chunks, true)), LengthDelimitedCodec());
  auto items = test::drain(framed);
  CHECK(frames_as_text<LengthDelimitedCodec>(items) == std::vector<std::string>{"hello", "", "world!"});
}

TEST_CASE("LengthDelimitedCodec gives a frame many times larger than one read's buffer") {
  std::string body(300000, 'z');
  for (std::size_t i = 0; i < body.size(); i += 7) body[i] = static_cast<char>('a' + i % 26);
  FramedRead framed(test::ScriptedIo(script_of({length_prefixed(body) + length_prefixed("next")}, true)),
                    LengthDelimitedCodec());
  auto items = test::drain(framed);
  CHECK(frames_as_text<LengthDelimitedCodec>(items) == std::vector<std::string>{body, "next"});
}

TEST_CASE("LengthDelimitedCodec rejects a length above its maximum before buffering the frame") {
  auto script = script_of({length_prefixed(std::string(100000, 'q'))}, true);
  FramedRead framed(test::ScriptedIo(script), LengthDelimitedCodec(1000));
  auto items = test::drain(framed);
  REQUIRE(items.size() == 1);
  CHECK(items[0].error().kind() == FrameError::Kind::TooLong);
  CHECK(framed.read_buffer().capacity() <= detail::kFrameReadChunk);
}

TEST_CASE("LengthDelimitedCodec ends a stream that stops inside a frame with unexpected_eof") {
  FramedRead framed(test::ScriptedIo(script_of({length_prefixed("whole").substr(0, 6)}, true)), LengthDelimitedCodec());
  bool ended = false;
  auto items = test::drain(framed, &ended);
  REQUIRE(items.size() == 1);
  CHECK(items[0].error().kind() == FrameError::Kind::Io);
  CHECK(items[0].error().io() == io_errc::unexpected_eof);
  CHECK(ended);
}

TEST_CASE("LengthDelimitedCodec refuses to encode a frame above its maximum") {
  LengthDelimitedCodec codec(4);
  BytesBuf out;
  CHECK(codec.encode(std::string_view("four"), out));
  CHECK(out == length_prefixed("four"));
  auto refused = codec.encode(std::string_view("fives"), out);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind() == FrameError::Kind::TooLong);
  CHECK(out.size() == 8);
}

TEST_CASE("BytesCodec gives the bytes of each read as one item") {
  FramedRead framed(test::ScriptedIo(script_of({"abc", "de"}, true)), BytesCodec());
  auto items = test::drain(framed);
  CHECK(frames_as_text<BytesCodec>(items) == std::vector<std::string>{"abc", "de"});
}

TEST_CASE("every codec finds the same frames however the bytes are split") {
  std::mt19937 rng(2026);
  std::string lines, delimited;
  std::vector<std::string> expected;
  for (int i = 0; i < 300; ++i) {
    std::string frame(std::uniform_int_distribution<int>(0, 200)(rng), static_cast<char>('a' + i % 26));
    expected.push_back(frame);
    lines += frame + (i % 2 ? "\r\n" : "\n");
    delimited += length_prefixed(frame);
  }
  for (int round = 0; round < 20; ++round) {
    CHECK(decode_in_chunks(LinesCodec(), lines, rng) == expected);
    CHECK(decode_in_chunks(LengthDelimitedCodec(), delimited, rng) == expected);
    std::string joined;
    for (auto& piece : decode_in_chunks(BytesCodec(), lines, rng)) joined += piece;
    CHECK(joined == lines);
  }
}

TEST_CASE("a decoder error is the last item: the stream ends after it") {
  auto script = script_of({"fine\n", std::string(100, 'x') + "\n", "never seen\n"}, true);
  FramedRead framed(test::ScriptedIo(script), LinesCodec(50));
  bool ended = false;
  auto items = test::drain(framed, &ended);
  REQUIRE(items.size() == 2);
  CHECK(items[0].value() == "fine");
  CHECK(items[1].error().kind() == FrameError::Kind::TooLong);
  CHECK(ended);
}

TEST_CASE("an I/O error of the reader becomes the last item, with its error code") {
  auto script = script_of({"one\n"}, false);
  script->read_error = ECONNRESET;
  FramedRead framed{test::ScriptedIo(script), LinesCodec()};
  bool ended = false;
  auto items = test::drain(framed, &ended);
  REQUIRE(items.size() == 2);
  CHECK(items[0].value() == "one");
  CHECK(items[1].error().io() == std::errc::connection_reset);
  CHECK(ended);
}

TEST_CASE("a framed reader waiting for the rest of a frame wakes when it comes") {
  auto script = script_of({"par"}, false);
  FramedRead framed{test::ScriptedIo(script), LinesCodec()};
  test::Probe probe;
  REQUIRE(framed.poll_next(probe.cx).is_pending());
  script->feed("tial\n");
  CHECK(probe.counts.woken() == 1);
  auto line = framed.poll_next(probe.cx);
  REQUIRE(line.is_ready());
  CHECK(line.value()->value() == "partial");
}

TEST_CASE("feeding many items and one flush writes them in one write") {
  auto script = std::make_shared<test::Script>();
  FramedWrite framed{test::ScriptedIo(script), LinesCodec()};
  for (int i = 0; i < 100; ++i) {
    auto feed_one = feed(framed, std::string("line ") + std::to_string(i));
    REQUIRE(test::poll_once(feed_one).value());
  }
  CHECK(script->writes == 0);
  auto flushing = flush(framed);
  REQUIRE(test::poll_once(flushing).value());
  CHECK(script->writes == 1);
  CHECK(script->written.rfind("line 99\n") == script->written.size() - 8);
}

TEST_CASE("a framed writer finishes a flush over many partial writes") {
  auto script = std::make_shared<test::Script>();
  script->max_write = 3;
  FramedWrite framed{test::ScriptedIo(script), LinesCodec()};
  auto sending = send(framed, std::string("a longer line"));
  REQUIRE(test::poll_once(sending).value());
  CHECK(script->written == "a longer line\n");
  CHECK(script->writes == 5);
}

TEST_CASE("a framed writer whose peer does not read stops taking items once 8 KiB wait") {
  auto script = std::make_shared<test::Script>();
  script->write_blocked = true;
  FramedWrite framed{test::ScriptedIo(script), LinesCodec()};
  test::Probe probe;
  std::string line(1000, 'w');
  int taken = 0;
  while (framed.poll_ready(probe.cx).is_ready()) {
    REQUIRE(framed.start_send(line));
    ++taken;
    REQUIRE(taken < 100);
  }
  CHECK(taken == 9);  // 9 * 1001 bytes crosses 8 KiB
  CHECK(framed.write_buffer().size() < 8192 + 1001);
  script->unblock();
  CHECK(probe.counts.woken() == 1);
  auto room = framed.poll_ready(probe.cx);
  REQUIRE(room.is_ready());
  CHECK(room.value());
  CHECK(script->written.size() == 9 * 1001);
}

TEST_CASE("a write error of a framed writer comes back as the send's error") {
  auto script = std::make_shared<test::Script>();
  script->write_error = EPIPE;
  FramedWrite framed{test::ScriptedIo(script), LinesCodec()};
  auto sending = send(framed, std::string("lost"));
  auto result = test::poll_once(sending);
  REQUIRE(result.is_ready());
  REQUIRE_FALSE(result.value());
  CHECK(result.value().error().io() == std::errc::broken_pipe);
}

TEST_CASE("close on a framed writer flushes, then shuts the writer down") {
  auto script = std::make_shared<test::Script>();
  FramedWrite framed{test::ScriptedIo(script), LinesCodec()};
  REQUIRE(framed.start_send(std::string("bye")));
  auto closing = close(framed);
  REQUIRE(test::poll_once(closing).value());
  CHECK(script->written == "bye\n");
  CHECK(script->shut_down);
}

TEST_CASE("two Framed sockets exchange lines over TCP") {
  Runtime rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  Framed left(std::move(client), LinesCodec());
  Framed right(std::move(server), LinesCodec());
  auto echoed = rt.block_on(then(send(left, std::string("ping")), [&](Result<void, FrameError> sent) {
    REQUIRE(sent);
    return then(next(right), [&](std::optional<Result<std::string, FrameError>> line) {
      REQUIRE(line);
      return then(send(right, line->value() + " pong"), [&](Result<void, FrameError>) { return next(left); });
    });
  }));
  REQUIRE(echoed);
  CHECK(echoed->value() == "ping pong");
}

TEST_CASE("try_read finds nothing on a quiet socket, and the bytes once readable() is Ready") {
  Runtime rt = Runtime::current_thread();
  auto listener = TcpListener::bind("127.0.0.1:0");
  test::Connected pair = test::connect_pair(rt, listener);
  TcpStream& client = pair.client;
  TcpStream& server = pair.server;
  std::array<std::byte, 64> buffer{};
  auto quiet = rt.block_on(lazy([&] { return server.try_read(buffer); }));
  REQUIRE_FALSE(quiet);
  rt.block_on(client.write_all(std::string_view("now")));
  rt.block_on(server.readable());
  auto got = server.try_read(buffer);
  REQUIRE(got);
  CHECK(got.value() == 3);
  auto written = client.try_write(std::string_view("more"));
  REQUIRE(written);
  CHECK(written.value() == 4);
}

TEST_CASE("LinesCodec rejects an over-long last line that has no newline") {
  FramedRead framed(test::ScriptedIo(script_of({"abc"}, true)), LinesCodec(2));
  auto items = test::drain(framed);
  REQUIRE(items.size() == 1);
  CHECK(items[0].error().kind() == FrameError::Kind::TooLong);
}

TEST_CASE("LinesCodec with SIZE_MAX as its maximum takes lines of any length") {
  LinesCodec codec(SIZE_MAX);
  BytesBuf buffer(std::string_view("short\r\n"));
  auto line = codec.decode(buffer);
  REQUIRE(line);
  REQUIRE(line.value());
  CHECK(*line.value() == "short");
  BytesBuf long_line(std::string(100000, 'z') + "\n");
  auto long_one = codec.decode(long_line);
  REQUIRE(long_one);
  REQUIRE(long_one.value());
  CHECK(long_one.value()->size() == 100000);
}

TEST_CASE("LinesCodec with a maximum near SIZE_MAX still yields each line") {
  LinesCodec codec(SIZE_MAX - 1);
  BytesBuf buffer(std::string_view("a"));
  auto partial = codec.decode(buffer);
  REQUIRE(partial);
  CHECK_FALSE(partial.value());
  buffer.append(std::string_view("b\nc\n"));
  auto first = codec.decode(buffer);
  REQUIRE(first);
  REQUIRE(first.value());
  CHECK(*first.value() == "ab");
  auto second = codec.decode(buffer);
  REQUIRE(second);
  REQUIRE(second.value());
  CHECK(*second.value() == "c");
  CHECK(buffer.empty());
}

TEST_CASE("LinesCodec discards an over-long line up to its newline and decodes the next") {
  LinesCodec codec(4);
  BytesBuf buffer(std::string_view("123456789\nok\n"));
  auto too_long = codec.decode(buffer);
  REQUIRE_FALSE(too_long);
  CHECK(too_long.error().kind() == FrameError::Kind::TooLong);
  auto next = codec.decode(buffer);
  REQUIRE(next);
  REQUIRE(next.value());
  CHECK(*next.value() == "ok");
  CHECK(buffer.empty());
}

TEST_CASE("LinesCodec reports an over-long line once however it arrives, and keeps no more than its maximum of it") {
  LinesCodec codec(4);
  BytesBuf buffer;
  int errors = 0;
  std::vector<std::string> lines;
  std::string input = std::string(1000, 'x') + "\nfine\n" + std::string(7, 'y') + "\r\nend\n";
  for (char byte : input) {
    buffer.append(std::string_view(&byte, 1));
    for (;;) {
      auto item = codec.decode(buffer);
      if (!item) {
        CHECK(item.error().kind() == FrameError::Kind::TooLong);
        ++errors;
        continue;
      }
      if (!item.value()) break;
      lines.push_back(*item.value());
    }
    CHECK(buffer.size() <= 4 + 2);
  }
  CHECK(errors == 2);
  CHECK(lines == std::vector<std::string>{"fine", "end"});
}

TEST_CASE("LinesCodec after an over-long line at the end of the stream gives no stray last line") {
  LinesCodec codec(3);
  BytesBuf buffer(std::string_view("abcdefg"));
  auto too_long = codec.decode(buffer);
  REQUIRE_FALSE(too_long);
  auto rest = codec.decode_eof(buffer);
  REQUIRE(rest);
  CHECK_FALSE(rest.value());
  CHECK(buffer.empty());
}
