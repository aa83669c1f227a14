// The two I/O backends: how a runtime picks one, the fallback when the
// kernel refuses io_uring, and what a TCP stream on the ring promises that
// epoll gives for free (bytes that no future awaits are kept, a write is
// owned by the stream until the kernel has it, closing hands the rest over).
// The other socket suites run under both backends (their *_epoll twins).
#include <doctest/doctest.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stddef.h>
#include <string>
#include <system_error>
#include <vector>

#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

// Whether this kernel lets this process use io_uring at all.
bool kernel_allows_uring() { return Driver(IoBackend::Uring).io_backend() == IoBackend::Uring; }

// Sets POLLUX_IO for a scope (the *_epoll run of this suite sets it too).
class ScopedEnv {
 public:
  explicit ScopedEnv(const char* value) {
    if (const char* old = std::getenv("POLLUX_IO")) saved_ = old;
    if (value != nullptr) {
      setenv("POLLUX_IO", value, 1);
    } else {
      unsetenv("POLLUX_IO");
    }
  }
  ~ScopedEnv() {
    if (saved_) {
      setenv("POLLUX_IO", saved_->c_str(), 1);
    } else {
      unsetenv("POLLUX_IO");
    }
  }

 private:
  std::optional<std::string> saved_;
};

std::vector<std::byte> pattern(std::size_t size, unsigned seed) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>((i * 131 + seed) & 0xff);
  return bytes;
}

// Polls one read of `stream` and drops it: a receive is left in the kernel
// with no future waiting. True if the read was Pending, as it must be.
bool leave_a_receive(Runtime& rt, TcpStream& stream) {
  auto guard = rt.enter();
  std::byte buffer[8];
  auto read = stream.read(buffer);
  return test::poll_once(read).is_pending();
}

Runtime uring_runtime() {
  RuntimeOptions options;
  options.io_backend = IoBackend::Uring;
  return Runtime::current_thread(options);
}

}  // namespace

TEST_CASE("a runtime says which backend its sockets run on, and its options force one") {
  RuntimeOptions epoll;
  epoll.io_backend = IoBackend::Epoll;
  CHECK(Runtime::current_thread(epoll).io_backend() == IoBackend::Epoll);
  CHECK(Runtime::multi_thread(1, epoll).io_backend() == IoBackend::Epoll);
  if (!kernel_allows_uring()) {
    MESSAGE("this kernel refuses io_uring: the Uring checks are skipped");
    return;
  }
  RuntimeOptions uring;
  uring.io_backend = IoBackend::Uring;
  CHECK(Runtime::current_thread(uring).io_backend() == IoBackend::Uring);
  CHECK(Runtime::multi_thread(2, uring).io_backend() == IoBackend::Uring);
  CHECK(std::string(to_string(IoBackend::Uring)) == "uring");
}

TEST_CASE("POLLUX_IO chooses the backend of a runtime that does not force one") {
  {
    ScopedEnv env("epoll");
    CHECK(Runtime::current_thread().io_backend() == IoBackend::Epoll);
  }
  if (kernel_allows_uring()) {
    ScopedEnv env("uring");
    CHECK(Runtime::current_thread().io_backend() == IoBackend::Uring);
    ScopedEnv unset(nullptr);
    CHECK(Runtime::current_thread().io_backend() == IoBackend::Uring);  // the default where allowed
  }
  RuntimeOptions forced;
  forced.io_backend = IoBackend::Epoll;
  ScopedEnv env("uring");
  CHECK(Runtime::current_thread(forced).io_backend() == IoBackend::Epoll);  // the program's choice wins
}

TEST_CASE("a multi-thread runtime runs on io_uring by default, each worker on a ring of its own") {
  ScopedEnv unset(nullptr);
  if (!kernel_allows_uring()) return;
  CHECK(Runtime::multi_thread(2).io_backend() == IoBackend::Uring);
  CHECK(Driver().io_backend() == IoBackend::Uring);
  // Each worker's ring and its eventfd exist once the runtime is made, and
  // go with it.
  int before = test::open_fds();
  {
    auto rt = Runtime::multi_thread(3);
    CHECK(test::open_fds() >= before + 3 * 2);
  }
  CHECK(test::open_fds() == before);
}

TEST_CASE("a POLLUX_IO that names no backend is a clear error") {
  ScopedEnv env("kqueue");
  try {
    (void)Runtime::current_thread();
    FAIL("no error");
  } catch (const std::invalid_argument& error) {
    CHECK(std::string(error.what()).find("POLLUX_IO is \"kqueue\"; it must be epoll or uring") != std::string::npos);
  }
}

TEST_CASE("a runtime whose kernel refuses io_uring runs on epoll, says so, and serves sockets") {
  // A child process behind a seccomp filter that answers io_uring_setup
  // with EPERM, as container runtimes' default profiles do.
  int err_pipe[2];
  REQUIRE(pipe(err_pipe) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    dup2(err_pipe[1], STDERR_FILENO);
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(10);
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) _exit(11);
    int code = 0;
    try {
      auto rt = uring_runtime();
      if (rt.io_backend() != IoBackend::Epoll) code = 12;
      auto listener = TcpListener::bind("127.0.0.1:0");
      auto [client, server] = test::connect_pair(rt, listener);
      std::string hello = "hello";
      rt.block_on(client.write_all(std::span<const char>(hello)));
      char got[5];
      rt.block_on(server.read_exact(std::span<char>(got)));
      if (std::string(got, 5) != "hello") code = 13;
    } catch (...) {
      code = 14;
    }
    _exit(code);
  }
  close(err_pipe[1]);
  std::string said;
  char chunk[256];
  for (ssize_t n; (n = read(err_pipe[0], chunk, sizeof chunk)) > 0;) said.append(chunk, static_cast<std::size_t>(n));
  close(err_pipe[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(said.find("io_uring was asked for but is unavailable") != std::string::npos);
  CHECK(said.find("running on epoll") != std::string::npos);
}

TEST_CASE("bytes that arrive while no read waits stay with the stream for the next read") {
  auto rt = uring_runtime();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  CHECK(leave_a_receive(rt, server));
  std::string hello = "still here";
  rt.block_on(client.write_all(std::span<const char>(hello)));
  rt.block_on(sleep(20ms));  // the receive completes with no one waiting
  std::byte buffer[64];
  std::size_t got = rt.block_on(server.read(buffer));
  CHECK(std::string(reinterpret_cast<const char*>(buffer), got) == "still here");
}

TEST_CASE("a read future dropped at any point of its life loses no byte") {
  auto rt = uring_runtime();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  std::vector<std::byte> sent = pattern(200'000, 7);
  auto writer = rt.spawn(client.write_all(sent));
  auto guard = rt.enter();
  std::vector<std::byte> received;
  std::byte buffer[3000];
  unsigned round = 0;
  while (received.size() < sent.size()) {
    // Every third read is dropped after its first poll, whatever it found.
    if (++round % 3 == 0) {
      auto read = server.read(buffer);
      auto polled = test::poll_once(read);
      if (polled.is_ready()) received.insert(received.end(), buffer, buffer + polled.value());
      continue;
    }
    std::size_t n = rt.block_on(server.read(buffer));
    REQUIRE(n > 0);
    received.insert(received.end(), buffer, buffer + n);
  }
  rt.block_on(std::move(writer)).value();
  CHECK(received == sent);
}

TEST_CASE("a write is done once the stream holds its bytes, and flush waits for the kernel to take them") {
  auto rt = uring_runtime();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  // Write while the peer does not read, until a write cannot finish: the
  // kernel's buffers and the stream's are full then.
  std::vector<std::byte> sent;  // every byte a write took
  std::vector<std::byte> chunk(16 * 1024);
  for (;;) {
    for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<std::byte>((sent.size() + i) * 131 & 0xff);
    auto written = rt.block_on(timeout(20ms, client.write(chunk)));
    if (!written.has_value()) break;
    sent.insert(sent.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(written.value()));
  }
  // What the writes took is still partly the stream's: flush waits.
  CHECK(!rt.block_on(timeout(20ms, flush(client))).has_value());
  std::vector<std::byte> received;
  auto reading = rt.spawn(read_to_end(server, received));
  rt.block_on(flush(client));  // the reader drains, the kernel takes the rest
  client.close();
  rt.block_on(std::move(reading)).value();
  CHECK(received.size() == sent.size());
  CHECK(received == sent);
}

TEST_CASE("a Unix stream runs on the ring too: its writes are buffered by the stream and flush waits for the kernel") {
  auto rt = uring_runtime();
  auto guard = rt.enter();
  auto [writer, reader] = UnixStream::pair();
  std::vector<std::byte> sent;
  std::vector<std::byte> chunk(16 * 1024);
  for (;;) {
    for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<std::byte>((sent.size() + i) * 7 & 0xff);
    auto written = rt.block_on(timeout(20ms, write(writer, chunk)));
    if (!written.has_value()) break;
    sent.insert(sent.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(written.value()));
  }
  // On epoll flush is Ready at once; on the ring the stream still holds bytes.
  CHECK(!rt.block_on(timeout(20ms, flush(writer))).has_value());
  std::vector<std::byte> received;
  auto reading = rt.spawn(read_to_end(reader, received));
  rt.block_on(flush(writer));
  writer.close();
  rt.block_on(std::move(reading)).value();
  CHECK(received == sent);
}

TEST_CASE("a failed send's error comes with the next write or flush") {
  auto rt = uring_runtime();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  // The peer resets the connection: close with unread data sends RST.
  std::string hello = "unread";
  rt.block_on(client.write_all(std::span<const char>(hello)));
  rt.block_on(sleep(10ms));
  server.close();
  rt.block_on(sleep(10ms));
  std::vector<std::byte> chunk(1024);
  bool failed = false;
  for (int i = 0; i < 1000 && !failed; ++i) {
    try {
      rt.block_on(client.write_all(chunk));
      rt.block_on(flush(client));
    } catch (const std::system_error& error) {
      failed = true;
      CHECK(std::string(error.what()).find("pollux::TcpStream::") != std::string::npos);
    }
  }
  CHECK(failed);
}

TEST_CASE("closing a stream hands the bytes it still holds to the kernel") {
  auto rt = uring_runtime();
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto [client, server] = test::connect_pair(rt, listener);
  std::vector<std::byte> sent = pattern(60'000, 11);
  rt.block_on(client.write_all(sent));
  client.close();  // at once: no flush
  std::vector<std::byte> received;
  std::byte buffer[4096];
  for (;;) {
    std::size_t n = rt.block_on(server.read(buffer));
    if (n == 0) break;
    received.insert(received.end(), buffer, buffer + n);
  }
  CHECK(received == sent);
}

TEST_CASE("more unread connections than provided buffers still deliver every byte") {
  // 300 connections, each with 20 KB the server does not read yet: more
  // than the ring's 512 buffers of 4 KB hold, so receives get ENOBUFS. The
  // connections are then read one after another: each must get its bytes
  // though the buffers sit in the queues of connections not read yet.
  REQUIRE(test::raise_fd_limit(2048));
  auto rt = uring_runtime();
  auto listener = TcpListener::bind("127.0.0.1:0");
  constexpr int kConnections = 300;
  std::vector<TcpStream> clients, servers;
  for (int i = 0; i < kConnections; ++i) {
    auto [client, server] = test::connect_pair(rt, listener);
    clients.push_back(std::move(client));
    servers.push_back(std::move(server));
  }
  std::vector<std::vector<std::byte>> sent;
  for (int i = 0; i < kConnections; ++i) {
    sent.push_back(pattern(20'000, static_cast<unsigned>(i)));
    rt.block_on(clients[static_cast<std::size_t>(i)].write_all(sent.back()));
  }
  // Start a read on each, so that each has a receive in the kernel.
  auto guard = rt.enter();
  std::byte scratch[1];
  for (auto& server : servers) {
    auto peek = server.peek(scratch);
    (void)test::poll_once(peek);
  }
  rt.block_on(sleep(50ms));
  for (int i = 0; i < kConnections; ++i) {
    std::vector<std::byte> received(sent[static_cast<std::size_t>(i)].size());
    rt.block_on(servers[static_cast<std::size_t>(i)].read_exact(received));
    CHECK(received == sent[static_cast<std::size_t>(i)]);
  }
}

TEST_CASE("a stream on the ring that outlives its runtime throws NoRuntime and closes cleanly") {
  int fds_before = test::open_fds();
  {
    std::optional<TcpStream> kept, peer;
    {
      auto rt = uring_runtime();
      auto listener = TcpListener::bind("127.0.0.1:0");
      auto [client, server] = test::connect_pair(rt, listener);
      CHECK(leave_a_receive(rt, server));  // in the kernel when the runtime goes
      kept.emplace(std::move(server));
      peer.emplace(std::move(client));  // open: the read has no end of stream to find
    }
    std::byte buffer[8];
    auto read = kept->read(buffer);
    CHECK_THROWS_AS((void)test::poll_once(read), NoRuntime);
  }
  CHECK(test::open_fds() == fds_before);
}
