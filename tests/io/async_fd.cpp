// AsyncFd over an eventfd and a pipe: readiness futures that wait for an
// edge, try_io that clears the readiness on EAGAIN, read_with/write_with,
// a wake from another thread, and closing with the AsyncFd.
#include <doctest/doctest.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <thread>

#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;

namespace {
ssize_t read_counter(int fd, std::uint64_t& value) { return ::read(fd, &value, sizeof value); }
ssize_t add_to_counter(int fd, std::uint64_t value) { return ::write(fd, &value, sizeof value); }
}  // namespace

TEST_CASE("readable waits for the fd's edge, woken from another thread") {
  auto rt = Runtime::current_thread();
  AsyncFd fd(::eventfd(0, 0));
  std::thread writer([raw = fd.fd()] { add_to_counter(raw, 5); });
  auto guard = rt.block_on(fd.readable());
  writer.join();
  std::uint64_t value = 0;
  CHECK(guard.try_io([&] { return read_counter(fd.fd(), value); }) == std::optional<ssize_t>(8));
  CHECK(value == 5u);
}

TEST_CASE("try_io clears the readiness after EAGAIN, so the next readable waits for an edge") {
  test::Probe probe;
  auto rt = Runtime::current_thread();
  auto inside = rt.enter();
  AsyncFd fd(::eventfd(0, 0));
  std::uint64_t value = 0;
  add_to_counter(fd.fd(), 1);
  auto first = rt.block_on(fd.readable());
  CHECK(first.try_io([&] { return read_counter(fd.fd(), value); }) == std::optional<ssize_t>(8));
  CHECK_FALSE(first.try_io([&] { return read_counter(fd.fd(), value); }).has_value());  // EAGAIN
  auto again = fd.readable();
  CHECK(again.poll(probe.cx).is_pending());  // cleared: it waits for an edge
  add_to_counter(fd.fd(), 1);
  auto fresh = rt.block_on(by_ref(again));  // polled already: it stays where it is (rule 4)
  CHECK(fresh.try_io([&] { return read_counter(fd.fd(), value); }) == std::optional<ssize_t>(8));
}

TEST_CASE("a fresh AsyncFd with nothing to read is not readable") {
  test::Probe probe;
  auto rt = Runtime::current_thread();
  auto inside = rt.enter();
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  AsyncFd reader(fds[0]);
  AsyncFd writer(fds[1]);
  auto readable = reader.readable();
  CHECK(readable.poll(probe.cx).is_pending());
  rt.block_on(sleep(std::chrono::milliseconds(20)));  // the driver runs: still no edge for the reader
  CHECK(readable.poll(probe.cx).is_pending());
  CHECK(probe.counts.woken() == 0);
  auto writable = rt.block_on(writer.writable());  // an empty pipe's writer hears it from epoll
  CHECK(writable.try_io([&] { return ::write(writer.fd(), "x", 1); }) == std::optional<ssize_t>(1));
}

TEST_CASE("a fresh AsyncFd over data already waiting is readable without a new edge") {
  auto rt = Runtime::current_thread();
  AsyncFd fd(::eventfd(0, 0));
  add_to_counter(fd.fd(), 3);
  auto guard = rt.block_on(fd.readable());
  std::uint64_t value = 0;
  CHECK(guard.try_io([&] { return read_counter(fd.fd(), value); }) == std::optional<ssize_t>(8));
  CHECK(value == 3u);
}

TEST_CASE("read_with retries after EAGAIN until the call succeeds") {
  auto rt = Runtime::current_thread();
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  AsyncFd reader(fds[0]);
  AsyncFd writer(fds[1]);
  char got[5] = {};
  auto [n, written] = rt.block_on(join(reader.read_with([&] { return ::read(reader.fd(), got, sizeof got); }),
                                       writer.write_with([&] { return ::write(writer.fd(), "hello", 5); })));
  CHECK(n == 5);
  CHECK(written == 5);
  CHECK(std::string(got, 5) == "hello");
}

TEST_CASE("an error from the call is thrown, naming AsyncFd") {
  auto rt = Runtime::current_thread();
  AsyncFd fd(::eventfd(0, 0));
  CHECK_THROWS_AS(rt.block_on(fd.write_with([&] { return add_to_counter(fd.fd(), UINT64_MAX); })), std::system_error);
}

TEST_CASE("an AsyncFd closes its fd when it goes, and a waiting future leaves no waker") {
  test::Probe probe;
  int before = test::open_fds();
  {
    auto rt = Runtime::current_thread();
    auto guard = rt.enter();
    AsyncFd fd(::eventfd(0, 0));
    {
      auto guard_ready = fd.readable();
      CHECK(guard_ready.poll(probe.cx).is_pending());  // a fresh, empty eventfd is not readable
    }
    CHECK(probe.counts.live() == 1);
  }
  CHECK(test::open_fds() == before);
}
