// Buffered I/O over scripted readers and writers: BufReader, BufWriter,
// read_until, read_line, lines, read_to_end and copy, with the bytes cut
// into chunks at awkward places and pauses (Pending) between them.
#include <doctest/doctest.h>

#include <deque>
#include <string>

#include "support.hpp"

using namespace pollux;

namespace {

// An AsyncRead that hands out a script: each string is what one read
// returns at most (a longer read buffer still gets only that chunk), and
// an empty string is one Pending answer, woken at once by the test through
// resume(). After the script, the end of the stream.
class ScriptedReader {
 public:
  explicit ScriptedReader(std::deque<std::string> script) : script_(std::move(script)) {}

  Poll<std::size_t> poll_read(Context& cx, std::span<std::byte> out) {
    ++reads;
    if (script_.empty()) return ready(std::size_t{0});
    if (script_.front().empty()) {
      script_.pop_front();
      waker = cx.waker();
      ++pendings;
      return pending;
    }
    std::string& chunk = script_.front();
    std::size_t n = std::min(out.size(), chunk.size());
    std::memcpy(out.data(), chunk.data(), n);
    chunk.erase(0, n);
    if (chunk.empty()) script_.pop_front();
    return ready(n);
  }
  void abandon(Interest) noexcept { waker = Waker(); }

  int reads = 0;
  int pendings = 0;
  Waker waker;

 private:
  std::deque<std::string> script_;
};

// An AsyncWrite that takes at most `per_write` bytes a call, and answers
// Pending (once, then takes bytes) every other call when `stall` is set.
class ChunkedWriter {
 public:
  explicit ChunkedWriter(std::size_t per_write, bool stall = false) : per_write_(per_write), stall_(stall) {}

  Poll<std::size_t> poll_write(Context& cx, std::span<const std::byte> bytes) {
    ++writes;
    if (stall_ && (stalled_ = !stalled_)) {
      cx.waker().wake_by_ref();
      return pending;
    }
    std::size_t n = std::min(bytes.size(), per_write_);
    data.append(reinterpret_cast<const char*>(bytes.data()), n);
    return ready(n);
  }
  void abandon(Interest) noexcept {}

  std::string data;
  int writes = 0;

 private:
  std::size_t per_write_;
  bool stall_;
  bool stalled_ = false;
};

// Polls until Ready, as a task whose waker the test calls at once.
template <class F>
auto drive(F& future) {
  Context cx(noop_waker());
  for (;;) {
    auto out = future.poll(cx);
    if (out.is_ready()) return std::move(out).value();
  }
}

template <class S>
std::vector<std::string> drain_lines(S& stream) {
  std::vector<std::string> out;
  Context cx(noop_waker());
  for (;;) {
    auto line = stream.poll_next(cx);
    if (line.is_pending()) continue;
    if (!line.value()) return out;
    out.push_back(std::move(*line.value()));
  }
}

}  // namespace

TEST_CASE("a BufReader reads a whole buffer at a time, however small the reads asked of it") {
  BufReader reader(ScriptedReader({"hello world"}), 64);
  char one[1];
  std::string got;
  for (int i = 0; i < 11; ++i) {
    auto read = reader.read(std::span<char>(one));
    CHECK(drive(read) == 1u);
    got += one[0];
  }
  CHECK(got == "hello world");
  CHECK(reader.get_ref().reads == 1);
}

TEST_CASE("a BufReader passes a read as large as its buffer straight through when it holds nothing") {
  BufReader reader(ScriptedReader({"abcdefgh"}), 4);
  char big[8];
  auto read = reader.read(std::span<char>(big));
  CHECK(drive(read) == 8u);
  CHECK(reader.buffer().empty());
}

TEST_CASE("a BufReader with no capacity is a clear error") {
  CHECK_THROWS_AS(BufReader(ScriptedReader({}), 0), std::invalid_argument);
}

TEST_CASE("read_until stops after the delimiter and leaves the rest buffered") {
  BufReader reader(ScriptedReader({"ab,cd,", "", "ef"}));
  std::string out;
  auto first = read_until(reader, ',', out);
  CHECK(drive(first) == 3u);
  CHECK(out == "ab,");
  out.clear();
  auto second = read_until(reader, ',', out);
  CHECK(drive(second) == 3u);
  CHECK(out == "cd,");
  out.clear();
  auto last = read_until(reader, ',', out);  // no delimiter before the end
  CHECK(drive(last) == 2u);
  CHECK(out == "ef");
  auto end = read_until(reader, ',', out);
  CHECK(drive(end) == 0u);
}

TEST_CASE("read_until reads into a byte vector too") {
  BufReader reader(ScriptedReader({"x\ny"}));
  std::vector<std::byte> out;
  auto line = read_until(reader, std::byte{'\n'}, out);
  CHECK(drive(line) == 2u);
  CHECK(out.size() == 2u);
}

TEST_CASE("read_line destroyed while waiting keeps what it read in the string, and loses nothing") {
  BufReader reader(ScriptedReader({"hel", "", "lo\nnext\n"}));
  std::string out;
  {
    auto line = read_line(reader, out);
    Context cx(noop_waker());
    CHECK(line.poll(cx).is_pending());
  }
  CHECK(out == "hel");
  auto line = read_line(reader, out);
  CHECK(drive(line) == 3u);
  CHECK(out == "hello\n");
}

TEST_CASE("lines yields each line without its newline, also with CRLF and a last line without one") {
  auto stream = lines(ScriptedReader({"one\r\ntw", "", "o\n\nthr", "ee"}));
  CHECK(drain_lines(stream) == std::vector<std::string>{"one", "two", "", "three"});
}

TEST_CASE("lines of an empty stream ends at once") {
  auto stream = lines(ScriptedReader({}));
  CHECK(drain_lines(stream).empty());
}

TEST_CASE("a line over the limit is a clear error, not unbounded memory") {
  auto stream = lines(ScriptedReader({std::string(100, 'x'), std::string(100, 'x'), "\n"}), 150);
  Context cx(noop_waker());
  try {
    (void)stream.poll_next(cx);
    FAIL("no error");
  } catch (const std::system_error& e) {
    CHECK(e.code() == make_error_code(io_errc::line_too_long));
    CHECK(std::string(e.what()).find("150") != std::string::npos);
  }
}

TEST_CASE("lines wakes its consumer through the reader's waker") {
  auto stream = lines(ScriptedReader({"a", "", "b\n"}));
  test::Probe probe;
  CHECK(stream.poll_next(probe.cx).is_pending());
  std::move(stream.get_ref().get_ref().waker).wake();
  CHECK(probe.counts.woken() == 1);
  CHECK(stream.poll_next(probe.cx).value() == std::optional<std::string>("ab"));
}

TEST_CASE("read_to_end appends everything up to the end") {
  ScriptedReader reader({"abc", "", std::string(10000, 'z')});
  std::string out = ">";
  auto all = read_to_end(reader, out);
  CHECK(drive(all) == 10003u);
  CHECK(out.size() == 10004u);
  CHECK(out.substr(0, 4) == ">abc");
}

TEST_CASE("a BufWriter gathers small writes and passes them on in one write when flushed") {
  BufWriter writer(ChunkedWriter(1000), 64);
  for (int i = 0; i < 10; ++i) {
    auto w = writer.write_all(std::span<const char>("ab", 2));
    drive(w);
  }
  CHECK(writer.get_ref().writes == 0);
  auto f = flush(writer);
  drive(f);
  CHECK(writer.get_ref().writes == 1);
  CHECK(writer.get_ref().data == "abababababababababab");
}

TEST_CASE("a BufWriter writes out when full, and takes a large write straight through") {
  BufWriter writer(ChunkedWriter(3, true), 8);
  std::string text = "0123456789abcdefghij";
  auto w = writer.write_all(std::span<const char>(text));
  drive(w);
  auto s = shutdown(writer);
  drive(s);
  CHECK(writer.get_ref().data == text);
}

TEST_CASE("copy moves every byte and flushes a buffered writer at the end") {
  ScriptedReader reader({"abc", "", std::string(20000, 'q')});
  BufWriter writer(ChunkedWriter(5000));
  auto c = copy(reader, writer);
  CHECK(drive(c) == 20003u);
  CHECK(writer.get_ref().data.size() == 20003u);
  CHECK(writer.buffer().empty());
}
