// Out of threads: the executors and the blocking pool fail with a clear
// error and leave nothing behind, or succeed and do the work once; never
// std::terminate, never a job run twice. Thread creation is made to fail
// on demand by wrapping pthread_create (the test binary's definition comes
// before libc's, and, under the sanitizers, before their interceptors,
// which it calls on).
#include <doctest/doctest.h>

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {
// How many more threads may start; negative: no limit.
std::atomic<int> thread_starts_left{-1};

// Lets `n` more threads start, then fails each start with EAGAIN, as
// pthread_create does when the process is out of threads or memory.
struct ThreadLimit {
  explicit ThreadLimit(int n) { thread_starts_left = n; }
  ~ThreadLimit() { thread_starts_left = -1; }
  ThreadLimit(const ThreadLimit&) = delete;
  ThreadLimit& operator=(const ThreadLimit&) = delete;
};

// The threads of this process.
int live_threads() {
  int count = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* entry = readdir(dir)) count += entry->d_name[0] != '.';
    closedir(dir);
  }
  return count;
}

// The threads of this process once a thread has started and ended: a
// sanitizer starts its own background thread with the first one.
int threads_at_rest() {
  std::thread([] {}).join();
  return live_threads();
}

// Waits (bounded) for the thread count to come back to `expected`: a
// joined thread leaves /proc/self/task a moment after join returns.
bool threads_back_to(int expected) {
  for (int i = 0; i < 2000 && live_threads() != expected; ++i) std::this_thread::sleep_for(1ms);
  return live_threads() == expected;
}
}  // namespace

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const Create real = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
  int left = thread_starts_left.load();
  while (left >= 0) {
    if (left == 0) return EAGAIN;
    if (thread_starts_left.compare_exchange_weak(left, left - 1)) break;
  }
  return real(thread, attr, start, arg);
}

TEST_CASE("a thread pool whose later workers cannot start throws system_error and leaves no thread behind") {
  int before = threads_at_rest();
  {
    ThreadLimit limit(2);
    CHECK_THROWS_AS(ThreadPool(4), std::system_error);
  }
  CHECK(threads_back_to(before));
}

TEST_CASE("a multi-thread runtime whose workers cannot start throws system_error naming the pool") {
  int before = threads_at_rest();
  ThreadLimit limit(1);
  try {
    auto rt = Runtime::multi_thread(3);
    FAIL("the runtime started without its threads");
  } catch (const std::system_error& error) {
    CHECK(error.code() == std::errc::resource_unavailable_try_again);
    CHECK(std::string(error.what()).find("pollux::ThreadPool: cannot start 3 worker threads") != std::string::npos);
  }
  CHECK(threads_back_to(before));
}

TEST_CASE("spawn_blocking that can start no thread, with none in the pool, throws and never runs the function") {
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  std::atomic<int> ran{0};
  {
    ThreadLimit limit(0);
    for (int i = 0; i < 20; ++i) CHECK_THROWS_AS((void)spawn_blocking([&ran] { ++ran; }), std::system_error);
  }
  std::this_thread::sleep_for(20ms);
  CHECK(ran == 0);
  CHECK(rt.block_on(spawn_blocking([&ran] { return ++ran; })) == 1);  // threads again: it works
}

TEST_CASE("spawn_blocking that can start no more threads queues the function for a live one and runs it once") {
  auto rt = Runtime::current_thread();
  std::atomic<bool> release{false};
  std::atomic<int> ran{0};
  auto blocker = rt.block_on(lazy([&release] {
    return spawn_blocking([&release] {
      while (!release) std::this_thread::sleep_for(1ms);
    });
  }));
  std::vector<BlockingHandle<int>> handles;
  {
    ThreadLimit limit(0);
    auto guard = rt.enter();
    for (int i = 0; i < 200; ++i) handles.push_back(spawn_blocking([&ran] { return ++ran; }));
  }
  release = true;
  int sum = 0;
  for (auto& handle : handles) sum += rt.block_on(std::move(handle)).value() > 0;
  rt.block_on(std::move(blocker)).value();
  CHECK(sum == 200);
  CHECK(ran == 200);
}

TEST_CASE("a bare blocking pool refuses a job it has no thread for, and takes the next once threads start") {
  BlockingPool pool;
  std::atomic<int> ran{0};
  {
    ThreadLimit limit(0);
    CHECK_THROWS_AS((void)spawn_blocking_on(pool, [&ran] { ++ran; }), std::system_error);
  }
  CHECK(block_on(spawn_blocking_on(pool, [&ran] { return ++ran; })) == 1);
  CHECK(pool.threads() == 1);
}

TEST_CASE("a runtime whose console thread cannot start throws system_error naming the console, leaving no socket") {
  std::string path = "/tmp/pollux-console-no-thread-" + std::to_string(::getpid()) + ".sock";
  RuntimeOptions options;
  options.console_socket = path;
  int fds_before = test::open_fds();
  int before = threads_at_rest();
  {
    ThreadLimit limit(0);  // a current-thread runtime starts no thread but the console's
    try {
      auto rt = Runtime::current_thread(options);
      FAIL("the runtime started without its console");
    } catch (const std::system_error& error) {
      CHECK(error.code() == std::errc::resource_unavailable_try_again);
      CHECK(std::string(error.what()).find("pollux: the console's thread") != std::string::npos);
    }
  }
  CHECK(::access(path.c_str(), F_OK) != 0);
  CHECK(test::open_fds() == fds_before);  // its socket and eventfd are closed
  CHECK(threads_back_to(before));
}

TEST_CASE("with POLLUX_CONSOLE, a console thread that cannot start is reported, and the runtime runs without it") {
  std::string path = "/tmp/pollux-console-no-thread-env-" + std::to_string(::getpid()) + ".sock";
  ::setenv("POLLUX_CONSOLE", path.c_str(), 1);
  std::optional<Runtime> rt;
  {
    ThreadLimit limit(0);
    rt.emplace(Runtime::current_thread());
  }
  ::unsetenv("POLLUX_CONSOLE");
  CHECK(rt->console_socket().empty());
  CHECK(::access(path.c_str(), F_OK) != 0);
  CHECK(rt->block_on(ready_future(5)) == 5);
}
