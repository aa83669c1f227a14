// Unix domain sockets: a stream through a path and through the abstract
// namespace, a pair, a listener's incoming stream, datagrams with their
// sender's path, and clear errors for bad paths and refused connections.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;

namespace {
std::span<const char> text(const std::string& s) { return std::span<const char>(s.data(), s.size()); }

// A socket path in a fresh temporary directory, removed with it.
struct TempPath {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("pollux-unix-" + std::to_string(::getpid()));
  std::string path;
  explicit TempPath(const char* name) {
    std::filesystem::create_directories(dir);
    path = (dir / name).string();
    std::filesystem::remove(path);
  }
  ~TempPath() { std::filesystem::remove_all(dir); }
};
}  // namespace

TEST_CASE("a Unix stream connects through a path, and both ends read what the other wrote") {
  TempPath where("stream.sock");
  auto rt = Runtime::current_thread();
  auto listener = UnixListener::bind(where.path);
  auto [client, server] = rt.block_on(join(UnixStream::connect(where.path), listener.accept()));
  std::string ping = "ping";
  char got[4];
  rt.block_on(join(client.write_all(text(ping)), server.read_exact(std::span<char>(got))));
  CHECK(std::string(got, 4) == "ping");
  CHECK(client.peer_path() == where.path);
}

TEST_CASE("writing to a Unix stream whose peer has gone throws broken pipe, naming the peer's path") {
  TempPath where("gone.sock");
  auto rt = Runtime::current_thread();
  auto listener = UnixListener::bind(where.path);
  auto [client, server] = rt.block_on(join(UnixStream::connect(where.path), listener.accept()));
  { auto gone = std::move(server); }
  std::string chunk(64 * 1024, 'x');
  try {
    // On io_uring the stream buffers a write, so the failure may come with
    // a later write or with the flush; either names the peer.
    for (int i = 0; i < 64; ++i) rt.block_on(client.write_all(text(chunk)));
    rt.block_on(flush(client));
    FAIL("writes to a closed peer kept succeeding");
  } catch (const std::system_error& e) {
    CHECK((e.code() == std::errc::broken_pipe || e.code() == std::errc::connection_reset));
    CHECK(std::string(e.what()).find("pollux::UnixStream::") != std::string::npos);
    CHECK(std::string(e.what()).find(where.path) != std::string::npos);
  }
}

TEST_CASE("a Unix stream in the abstract namespace needs no file") {
  auto rt = Runtime::current_thread();
  std::string name = std::string("\0pollux-test-", 13) + std::to_string(::getpid());
  auto listener = UnixListener::bind(name);
  auto [client, server] = rt.block_on(join(UnixStream::connect(name), listener.accept()));
  std::string hello = "hello";
  rt.block_on(client.write_all(text(hello)));
  client.shutdown();
  std::string all;
  rt.block_on(read_to_end(server, all));
  CHECK(all == "hello");
}

TEST_CASE("a Unix stream pair carries lines both ways") {
  auto rt = Runtime::current_thread();
  auto [a, b] = UnixStream::pair();
  std::string sent = "one\ntwo\n";
  auto [unit, received] =
      rt.block_on(join(a.write_all(text(sent)) | map([&a = a] { a.shutdown(); }), lines(std::move(b)) | collect()));
  CHECK(received == std::vector<std::string>{"one", "two"});
}

TEST_CASE("a Unix listener's incoming stream yields each connection") {
  TempPath where("incoming.sock");
  auto rt = Runtime::current_thread();
  auto listener = UnixListener::bind(where.path);
  auto [streams, clients] = rt.block_on(join(listener.incoming() | take(2) | collect(),
                                             join(UnixStream::connect(where.path), UnixStream::connect(where.path))));
  CHECK(streams.size() == 2u);
}

TEST_CASE("Unix datagrams arrive whole, with the sender's path") {
  TempPath a_path("a.sock");
  TempPath b_path("b.sock");
  auto rt = Runtime::current_thread();
  auto a = UnixDatagram::bind(a_path.path);
  auto b = UnixDatagram::bind(b_path.path);
  std::string hi = "hi there";
  std::byte buffer[64];
  auto [sent, got] = rt.block_on(join(a.send_to(std::as_bytes(text(hi)), b_path.path), b.recv_from(buffer)));
  CHECK(sent == hi.size());
  CHECK(got.first == hi.size());
  CHECK(got.second == a_path.path);
}

TEST_CASE("a connected Unix datagram pair sends and receives without addresses") {
  auto rt = Runtime::current_thread();
  auto [a, b] = UnixDatagram::pair();
  std::string ping = "ping";
  std::byte buffer[16];
  auto [sent, n] = rt.block_on(join(a.send(std::as_bytes(text(ping))), b.recv(buffer)));
  CHECK(n == 4u);
  CHECK(sent == 4u);
}

TEST_CASE("connecting to a path nobody listens at is an error naming it, and a bad path is caught at once") {
  TempPath where("nobody.sock");
  auto rt = Runtime::current_thread();
  try {
    rt.block_on(UnixStream::connect(where.path));
    FAIL("it connected");
  } catch (const std::system_error& e) {
    CHECK(std::string(e.what()).find(where.path) != std::string::npos);
  }
  CHECK_THROWS_AS(UnixListener::bind(std::string(200, 'x')), std::invalid_argument);
  CHECK_THROWS_AS(UnixListener::bind(""), std::invalid_argument);
}

TEST_CASE("binding a path that exists is address in use") {
  TempPath where("taken.sock");
  auto first = UnixListener::bind(where.path);
  CHECK_THROWS_AS(UnixListener::bind(where.path), std::system_error);
}

TEST_CASE("Unix sockets close their fds when they go") {
  int before = test::open_fds();
  {
    auto [a, b] = UnixStream::pair();
    auto [c, d] = UnixDatagram::pair();
  }
  CHECK(test::open_fds() == before);
}
