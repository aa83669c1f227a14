// Framed taken apart and put together again: a protocol that switches codec
// mid-stream loses no byte that was read ahead, and a sink's backpressure
// boundary is the one its user chose.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "codec_support.hpp"
#include "support.hpp"

using namespace pollux;

namespace {

std::string length_prefixed(std::string_view body) {
  std::string frame(4, '\0');
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>((body.size() >> (8 * (3 - i))) & 0xff);
  return frame + std::string(body);
}

// The next item of `stream`, which must have one ready.
template <class S>
item_t<S> next_ready(S& stream) {
  Context cx(noop_waker());
  auto item = stream.poll_next(cx);
  REQUIRE(item.is_ready());
  REQUIRE(item.value().has_value());
  return std::move(*item.value());
}

std::string text_of(const BytesBuf& bytes) { return std::string(bytes.view()); }

}  // namespace

TEST_CASE("a line protocol switches to length-delimited frames after a command, with the frames already read") {
  // One read brings the command and the binary frames after it: the line
  // codec's buffer holds them when the switch happens.
  auto script = std::make_shared<test::Script>();
  script->feed("hello\nBINARY\n" + length_prefixed("abc") + length_prefixed("") + length_prefixed("xyz"));
  script->end();
  Framed lines{test::ScriptedIo(script), LinesCodec()};
  CHECK(next_ready(lines).value() == "hello");
  CHECK(next_ready(lines).value() == "BINARY");
  CHECK(script->chunks.empty());  // everything was read ahead

  Framed binary = std::move(lines).map_codec([](LinesCodec&&) { return LengthDelimitedCodec(); });
  CHECK(text_of(next_ready(binary).value()) == "abc");
  CHECK(text_of(next_ready(binary).value()) == "");
  CHECK(text_of(next_ready(binary).value()) == "xyz");
  bool ended = false;
  CHECK(test::drain(binary, &ended).empty());
  CHECK(ended);
}

TEST_CASE("into_parts hands over the unread bytes, and from_parts decodes them before reading") {
  auto script = std::make_shared<test::Script>();
  script->feed("one\ntwo\nthr");
  Framed lines{test::ScriptedIo(script), LinesCodec()};
  CHECK(next_ready(lines).value() == "one");
  FramedParts parts = std::move(lines).into_parts();
  CHECK(text_of(parts.read_buffer) == "two\nthr");

  Framed again(std::move(parts));
  CHECK(next_ready(again).value() == "two");
  CHECK(test::drain(again).empty());  // "thr" waits for the rest of its line
  script->feed("ee\n");
  CHECK(next_ready(again).value() == "three");
}

TEST_CASE("bytes encoded and not yet written travel with the parts and are written first") {
  test::Probe probe;
  auto script = std::make_shared<test::Script>();
  script->write_blocked = true;
  Framed first{test::ScriptedIo(script), LinesCodec()};
  REQUIRE(first.poll_ready(probe.cx).is_ready());
  REQUIRE(first.start_send(std::string("before")));
  CHECK(first.poll_flush(probe.cx).is_pending());
  FramedParts parts = std::move(first).into_parts();
  CHECK(text_of(parts.write_buffer) == "before\n");

  Framed second = Framed<test::ScriptedIo, LengthDelimitedCodec>::from_parts(
      {std::move(parts.io), LengthDelimitedCodec(), std::move(parts.read_buffer), std::move(parts.write_buffer)});
  script->unblock();
  REQUIRE(second.poll_ready(probe.cx).is_ready());
  REQUIRE(second.start_send(BytesBuf(std::string_view("after"))));
  auto flushed = second.poll_flush(probe.cx);
  REQUIRE(flushed.is_ready());
  CHECK(flushed.value());
  CHECK(script->written == "before\n" + length_prefixed("after"));
}

TEST_CASE("a framed reader's decoder changes mid-stream through map_decoder, keeping what it read") {
  auto script = std::make_shared<test::Script>();
  script->feed("LEN\n" + length_prefixed("payload"));
  FramedRead reader{test::ScriptedIo(script), LinesCodec()};
  CHECK(next_ready(reader).value() == "LEN");
  FramedRead binary = std::move(reader).map_decoder([](LinesCodec&&) { return LengthDelimitedCodec(); });
  CHECK(text_of(next_ready(binary).value()) == "payload");
}

TEST_CASE("a framed writer's backpressure boundary is the one set, not 8 KiB") {
  test::Probe probe;
  auto script = std::make_shared<test::Script>();
  script->write_blocked = true;
  FramedWrite framed{test::ScriptedIo(script), LinesCodec()};
  framed.set_backpressure_boundary(100);
  CHECK(framed.backpressure_boundary() == 100);
  int taken = 0;
  while (framed.poll_ready(probe.cx).is_ready()) {
    REQUIRE(framed.start_send(std::string(30, 'x')));
    ++taken;
    REQUIRE(taken < 100);
  }
  CHECK(taken == 4);  // 4 * 31 bytes crosses 100
  CHECK(framed.write_buffer().size() == 124);
}

TEST_CASE("a backpressure boundary of 0 is taken as 1: every item is flushed before the next") {
  test::Probe probe;
  auto script = std::make_shared<test::Script>();
  Framed framed{test::ScriptedIo(script), LinesCodec()};
  framed.set_backpressure_boundary(0);
  CHECK(framed.backpressure_boundary() == 1);
  REQUIRE(framed.poll_ready(probe.cx).is_ready());
  REQUIRE(framed.start_send(std::string("a")));
  script->write_blocked = true;
  CHECK(framed.poll_ready(probe.cx).is_pending());
  script->unblock();
  REQUIRE(framed.poll_ready(probe.cx).is_ready());
  CHECK(script->written == "a\n");
}

TEST_CASE("the boundary travels with the parts") {
  auto script = std::make_shared<test::Script>();
  Framed framed{test::ScriptedIo(script), LinesCodec()};
  framed.set_backpressure_boundary(64);
  Framed again = std::move(framed).map_codec([](LinesCodec codec) { return codec; });
  CHECK(again.backpressure_boundary() == 64);
}
