// StreamReader and ReaderStream: chunks read as bytes and bytes read as
// chunks, with nothing lost at a chunk's edge, errors carried across, and a
// reader that waits on its stream woken by it (tokio-util's io tests, in C++).
#include <doctest/doctest.h>

#include <array>
#include <string>
#include <system_error>
#include <vector>

#include "support.hpp"

using namespace pollux;

namespace {

std::string text_of(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

template <class S>
auto poll_next_once(S& stream) {
  Context cx(noop_waker());
  return stream.poll_next(cx);
}

}  // namespace

TEST_CASE("a StreamReader reads across chunk boundaries and skips empty chunks") {
  StreamReader reader(iter(std::vector<std::string>{"hel", "", "lo wo", "rld"}));
  std::array<std::byte, 11> buffer{};
  CHECK_NOTHROW(block_on(read_exact(reader, buffer)));
  CHECK(text_of(buffer) == "hello world");
  std::array<std::byte, 4> more{};
  auto end = read(reader, more);
  CHECK(block_on(std::move(end)) == 0u);
}

TEST_CASE("a read with less room than the chunk takes part of it, and the next read the rest") {
  StreamReader reader(iter(std::vector<std::string>{"abcdef"}));
  std::array<std::byte, 4> buffer{};
  CHECK(block_on(read(reader, buffer)) == 4u);
  CHECK(text_of(buffer) == "abcd");
  CHECK(block_on(read(reader, buffer)) == 2u);
  CHECK(text_of(std::span(buffer).first(2)) == "ef");
}

TEST_CASE("a StreamReader is an AsyncBufRead: lines come out of chunks that split them") {
  StreamReader reader(iter(std::vector<std::string>{"first li", "ne\nsecond", " line\n"}));
  std::string line;
  CHECK(block_on(read_line(reader, line)) == 11u);
  CHECK(line == "first line\n");
  line.clear();
  CHECK(block_on(read_line(reader, line)) == 12u);
  CHECK(line == "second line\n");
}

TEST_CASE("an error chunk is thrown by the read that reaches it, after the bytes before it") {
  using Chunk = Result<std::string, std::error_code>;
  std::vector<Chunk> chunks;
  chunks.emplace_back(std::string("ok"));
  chunks.emplace_back(std::make_error_code(std::errc::connection_reset));
  StreamReader reader(iter(std::move(chunks)));
  std::array<std::byte, 8> buffer{};
  CHECK(block_on(read(reader, buffer)) == 2u);
  try {
    (void)block_on(read(reader, buffer));
    FAIL("the error chunk was not thrown");
  } catch (const std::system_error& error) {
    CHECK(error.code() == std::errc::connection_reset);
  }
}

TEST_CASE("a StreamReader polled before its channel has a chunk is woken by the send") {
  test::Probe probe;
  auto [tx, rx] = mpsc::unbounded_channel<BytesBuf>();
  StreamReader reader(std::move(rx));
  std::array<std::byte, 8> buffer{};
  auto reading = read(reader, buffer);
  CHECK(reading.poll(probe.cx).is_pending());
  REQUIRE(tx.send(BytesBuf(std::string_view("late"))));
  CHECK(probe.counts.woken() == 1);
  auto got = reading.poll(probe.cx);
  REQUIRE(got.is_ready());
  CHECK(got.value() == 4u);
  CHECK(text_of(std::span(buffer).first(4)) == "late");
}

TEST_CASE("into_parts gives back the stream and the unread rest of the current chunk") {
  StreamReader reader(iter(std::vector<std::string>{"abcdef", "gh"}));
  std::array<std::byte, 2> buffer{};
  CHECK(block_on(read(reader, buffer)) == 2u);
  auto [stream, rest] = std::move(reader).into_parts();
  CHECK(rest == std::string_view("cdef"));
  auto next = poll_next_once(stream);
  REQUIRE(next.is_ready());
  CHECK(*next.value() == "gh");
}

TEST_CASE("a ReaderStream gives chunks of at most its capacity, then ends with the reader") {
  ReaderStream chunks(StreamReader(iter(std::vector<std::string>{"abcdefg"})), 3);
  std::vector<std::string> seen;
  for (;;) {
    auto item = block_on(next(chunks));
    if (!item) break;
    REQUIRE(item->has_value());
    seen.push_back(std::string(item->value().view()));
  }
  CHECK(seen == std::vector<std::string>{"abc", "def", "g"});
}

TEST_CASE("a ReaderStream gives the reader's error as its last item, then ends") {
  using Chunk = Result<std::string, std::error_code>;
  std::vector<Chunk> chunks;
  chunks.emplace_back(std::string("x"));
  chunks.emplace_back(std::make_error_code(std::errc::broken_pipe));
  ReaderStream stream(StreamReader(iter(std::move(chunks))));
  auto first = block_on(next(stream));
  REQUIRE(first);
  CHECK(first->value() == std::string_view("x"));
  auto failed = block_on(next(stream));
  REQUIRE(failed);
  REQUIRE(!failed->has_value());
  CHECK(failed->error() == std::errc::broken_pipe);
  CHECK(!block_on(next(stream)));
}
