// Framed's read and write deadlines: a frame must be whole within the read
// deadline of its first byte, however slowly it drips in, while the time
// between frames is not limited; a flush may wait for the peer at most the
// write deadline. Each ends the connection with std::errc::timed_out.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <system_error>

#include "codec_support.hpp"
#include "death.hpp"
#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

std::shared_ptr<test::Script> open_script() { return std::make_shared<test::Script>(); }

bool is_timed_out(const FrameError& error) {
  return error.kind() == FrameError::Kind::Io && error.io() == std::make_error_code(std::errc::timed_out);
}

}  // namespace

TEST_CASE("a frame dripping in a byte at a time is cut off at the read deadline of its first byte") {
  test::Probe probe;
  test::PausedDriver d;
  auto script = open_script();
  FramedRead framed{test::ScriptedIo(script), LinesCodec()};
  framed.set_read_deadline(100ms);
  for (int i = 0; i < 9; ++i) {
    script->feed("x");
    CHECK(framed.poll_next(probe.cx).is_pending());
    d.driver.advance(10ms);  // each byte keeps the connection busy, but the line never ends
  }
  d.driver.advance(10ms);
  auto item = framed.poll_next(probe.cx);
  REQUIRE(item.is_ready());
  REQUIRE(item.value());
  REQUIRE_FALSE(*item.value());
  CHECK(is_timed_out(item.value()->error()));
  CHECK_FALSE(framed.poll_next(probe.cx).value().has_value());  // the error was the last item
}

TEST_CASE("the read deadline does not limit the time between frames, only each frame") {
  test::Probe probe;
  test::PausedDriver d;
  auto script = open_script();
  FramedRead framed{test::ScriptedIo(script), LinesCodec()};
  framed.set_read_deadline(100ms);
  for (int i = 0; i < 5; ++i) {
    CHECK(framed.poll_next(probe.cx).is_pending());
    d.driver.advance(1s);  // quiet between requests: the idle limit's business
    script->feed("he");
    CHECK(framed.poll_next(probe.cx).is_pending());
    d.driver.advance(90ms);
    script->feed("llo\n");
    auto line = framed.poll_next(probe.cx);
    REQUIRE(line.is_ready());
    CHECK(line.value()->value() == "hello");
  }
}

TEST_CASE("a frame that follows another in the same read is timed from when its reader first waits") {
  test::Probe probe;
  test::PausedDriver d;
  auto script = open_script();
  FramedRead framed{test::ScriptedIo(script), LinesCodec()};
  framed.set_read_deadline(100ms);
  script->feed("one\ntw");
  CHECK(framed.poll_next(probe.cx).value()->value() == "one");
  CHECK(framed.poll_next(probe.cx).is_pending());  // "tw" waits: its time runs from here
  d.driver.advance(99ms);
  CHECK(framed.poll_next(probe.cx).is_pending());
  d.driver.advance(1ms);
  auto item = framed.poll_next(probe.cx);
  REQUIRE(item.is_ready());
  CHECK(is_timed_out(item.value()->error()));
}

TEST_CASE("a flush that waits longer than the write deadline fails with timed_out") {
  test::Probe probe;
  test::PausedDriver d;
  auto script = open_script();
  script->write_blocked = true;  // a peer that never reads
  FramedWrite framed{test::ScriptedIo(script), LinesCodec()};
  framed.set_write_deadline(50ms);
  auto sending = send(framed, std::string("answer"));
  CHECK(sending.poll(probe.cx).is_pending());
  d.driver.advance(49ms);
  CHECK(sending.poll(probe.cx).is_pending());
  d.driver.advance(1ms);
  CHECK(probe.counts.woken() >= 1);
  auto result = sending.poll(probe.cx);
  REQUIRE(result.is_ready());
  REQUIRE_FALSE(result.value());
  CHECK(is_timed_out(result.value().error()));
}

TEST_CASE("a flush that completes in time leaves the write deadline for the next one") {
  test::Probe probe;
  test::PausedDriver d;
  auto script = open_script();
  FramedWrite framed{test::ScriptedIo(script), LinesCodec()};
  framed.set_write_deadline(50ms);
  for (int i = 0; i < 5; ++i) {
    script->write_blocked = true;
    auto sending = send(framed, std::string("line"));
    CHECK(sending.poll(probe.cx).is_pending());
    d.driver.advance(40ms);
    script->unblock();
    CHECK(sending.poll(probe.cx).value());
    d.driver.advance(40ms);  // 80 ms since the first wait began: each flush has its own limit
  }
  CHECK(script->written == "line\nline\nline\nline\nline\n");
}

TEST_CASE("Framed has both deadlines on one socket") {
  test::Probe probe;
  test::PausedDriver d;
  auto script = open_script();
  Framed framed{test::ScriptedIo(script), LinesCodec()};
  framed.set_read_deadline(100ms);
  framed.set_write_deadline(100ms);
  script->feed("partial");
  CHECK(framed.poll_next(probe.cx).is_pending());
  d.driver.advance(100ms);
  auto item = framed.poll_next(probe.cx);
  REQUIRE(item.is_ready());
  CHECK(is_timed_out(item.value()->error()));
}

TEST_CASE("a Framed moved while a send waits stops a debug build with the type named") {
  if constexpr (!pollux::detail::check_contract) return;
  test::Death death = test::run_in_child([] {
    test::Probe probe;
    auto script = std::make_shared<test::Script>();
    script->write_blocked = true;
    Framed framed{test::ScriptedIo(script), LinesCodec()};
    auto sending = send(framed, std::string(4 << 20, 'm'));
    if (sending.poll(probe.cx).is_ready()) return;
    Framed moved(std::move(framed));  // the send still points at the old one
  });
  CHECK(death.aborted);
  CHECK(death.stderr_text.find("pollux::Framed") != std::string::npos);
  CHECK(death.stderr_text.find("rule 4") != std::string::npos);
}

TEST_CASE("a Framed whose flush completed may move again") {
  test::Probe probe;
  auto script = std::make_shared<test::Script>();
  Framed framed{test::ScriptedIo(script), LinesCodec()};
  {
    auto sending = send(framed, std::string("done"));
    CHECK(sending.poll(probe.cx).value());
  }
  Framed moved(std::move(framed));
  CHECK(script->written == "done\n");
}
