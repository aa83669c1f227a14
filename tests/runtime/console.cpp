// The console socket: a runtime answers each connection with one snapshot
// of its metrics and tasks, from a thread of its own, so that it answers
// while its tasks hang; the snapshot's text parses back to what was sent,
// and anything else is refused with the line it failed on. Hostile
// clients (one that never reads, one that sends garbage) cannot stop the
// console, and a socket path is never taken from a live owner.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "death.hpp"
#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

// A socket path of this test process's own.
std::string socket_path(const char* name) {
  return "/tmp/pollux-console-test-" + std::to_string(::getpid()) + "-" + name + ".sock";
}

// A connected client of the console at `path` (-1 when nothing listens).
int attach(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) < 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// What the console at `path` answers, whole.
std::string read_console(const std::string& path) {
  int fd = attach(path);
  REQUIRE(fd >= 0);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

// Options of a runtime whose console listens on `path`.
RuntimeOptions with_console(const std::string& path) {
  RuntimeOptions options;
  options.console_socket = path;
  return options;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

ConsoleSnapshot sample_snapshot() {
  ConsoleSnapshot s;
  ExecutorMetrics& e = s.metrics.executor;
  e.counted = true;
  e.workers = 2;
  e.uptime = 1500ms;
  e.live_tasks = 2;
  e.spawned_tasks = 10;
  e.finished_tasks = 8;
  e.inject_queue_depth = 3;
  e.worker = {WorkerMetrics{100, 5, 2, 1, 7, 6, 40ms, 4}, WorkerMetrics{200, 0, 0, 0, 9, 9, 50ms, 0}};
  e.histograms = true;
  e.poll_duration.counts[1] = 250;
  e.poll_duration.counts[23] = 50;
  e.poll_duration.sum = 12345ns;
  e.schedule_latency.counts[0] = 300;
  s.metrics.driver = DriverMetrics{true, 11, 22, 33};
  s.metrics.blocking = BlockingPoolMetrics{2, 1, 0, 4};
  s.tasks = std::vector<TaskInfo>{
      TaskInfo{7, "accept loop", TaskInfo::State::Idle, 12, 1s, 1, TaskFigures{2, 10, 3ms, 4ms, 993ms, 1ms, 0ns}},
      TaskInfo{9, "a name with = and\nnewline", TaskInfo::State::Running, 3, 20ms, 0, std::nullopt},
  };
  return s;
}

}  // namespace

TEST_CASE("a console snapshot's text parses back to the snapshot") {
  ConsoleSnapshot s = sample_snapshot();
  ConsoleSnapshot back = parse_console_snapshot(format_console_snapshot(s));
  const ExecutorMetrics& e = back.metrics.executor;
  CHECK(e.counted);
  CHECK(e.workers == 2);
  CHECK(e.uptime == 1500ms);
  CHECK(e.live_tasks == 2);
  CHECK(e.spawned_tasks == 10);
  CHECK(e.finished_tasks == 8);
  CHECK(e.inject_queue_depth == 3);
  REQUIRE(e.worker.size() == 2);
  CHECK(e.worker[0].polls == 100);
  CHECK(e.worker[0].steals == 5);
  CHECK(e.worker[0].steal_operations == 2);
  CHECK(e.worker[0].overflows == 1);
  CHECK(e.worker[0].parks == 7);
  CHECK(e.worker[0].unparks == 6);
  CHECK(e.worker[0].busy == 40ms);
  CHECK(e.worker[0].local_queue_depth == 4);
  CHECK(e.worker[1].polls == 200);
  CHECK(e.histograms);
  CHECK(e.poll_duration.counts == s.metrics.executor.poll_duration.counts);
  CHECK(e.poll_duration.sum == 12345ns);
  CHECK(e.schedule_latency.counts == s.metrics.executor.schedule_latency.counts);
  CHECK(back.metrics.driver.socket_events == 11);
  CHECK(back.metrics.driver.uring_completions == 22);
  CHECK(back.metrics.driver.timers_fired == 33);
  CHECK(back.metrics.blocking.threads == 2);
  CHECK(back.metrics.blocking.idle_threads == 1);
  CHECK(back.metrics.blocking.jobs_submitted == 4);
  REQUIRE(back.tasks);
  REQUIRE(back.tasks->size() == 2);
  CHECK((*back.tasks)[0].id == 7);
  CHECK((*back.tasks)[0].name == "accept loop");
  CHECK((*back.tasks)[0].state == TaskInfo::State::Idle);
  CHECK((*back.tasks)[0].age == 1s);
  CHECK((*back.tasks)[0].wakers == 1);
  REQUIRE((*back.tasks)[0].figures);
  const TaskFigures& f = *(*back.tasks)[0].figures;
  CHECK(f.wakes_by_self == 2);
  CHECK(f.wakes_by_others == 10);
  CHECK(f.busy == 3ms);
  CHECK(f.scheduled == 4ms);
  CHECK(f.idle == 993ms);
  CHECK(f.longest_poll == 1ms);
  CHECK(f.current_poll == 0ns);
  CHECK_FALSE((*back.tasks)[1].figures);                        // from a runtime built without them
  CHECK((*back.tasks)[1].name == "a name with = and newline");  // one task, one line
  CHECK((*back.tasks)[1].state == TaskInfo::State::Running);
}

TEST_CASE("a snapshot without tasks says so, and parses back without them") {
  ConsoleSnapshot s = sample_snapshot();
  s.tasks.reset();
  ConsoleSnapshot back = parse_console_snapshot(format_console_snapshot(s));
  CHECK_FALSE(back.tasks);
  CHECK(back.metrics.executor.workers == 2);
}

TEST_CASE("a text that is not a whole snapshot is refused with the line it failed on") {
  std::string good = format_console_snapshot(sample_snapshot());
  auto refused = [](const std::string& text, const std::string& says) {
    CAPTURE(text);
    try {
      (void)parse_console_snapshot(text);
      FAIL("parsed");
    } catch (const ConsoleFormatError& error) {
      CAPTURE(error.what());
      CHECK(std::string(error.what()).find(says) != std::string::npos);
    }
  };
  refused("", "empty");
  refused("HTTP/1.1 200 OK\r\n\r\n", "line 1: expected \"pollux-console 2\"");
  refused("pollux-console 3\nend\n", "another version");
  refused(good.substr(0, good.find("\nend")), "cut short");
  std::string bad_number = good;
  bad_number.replace(bad_number.find("polls=100"), 9, "polls=1x0");
  refused(bad_number, "line 3 (worker): polls is not a whole number");
  std::string unknown = good;
  unknown.insert(unknown.find("driver"), "gremlin x=1\n");
  refused(unknown, "(gremlin): unknown line");
  std::string extra_word = good;
  extra_word.replace(extra_word.find("queue=4"), 7, "queue=4 color=red");
  refused(extra_word, "unknown word color=");
  std::string missing_worker = good;
  std::size_t w = missing_worker.find("worker polls=200");
  missing_worker.erase(w, missing_worker.find('\n', w) - w + 1);
  refused(missing_worker, "2 workers, but 1 worker lines");
  refused(good + "more\n", "text after \"end\"");
  std::string half_figures = good;
  half_figures.erase(half_figures.find(" wakes_self=2"), 13);
  refused(half_figures, "(task): no wakes_self=");
}

TEST_CASE("a multi-thread runtime's console lists its workers and named tasks") {
  std::string path = socket_path("mt");
  RuntimeOptions options = with_console(path);
  Runtime rt = Runtime::multi_thread(2, options);
  CHECK(rt.console_socket() == path);
  auto idle = rt.spawn(pending_future(), "waits for ever");
  ConsoleSnapshot s = parse_console_snapshot(read_console(path));
  CHECK(s.metrics.executor.workers == 2);
  REQUIRE(s.tasks);
  REQUIRE(s.tasks->size() == 1);
  CHECK((*s.tasks)[0].name == "waits for ever");
  idle.abort();
}

TEST_CASE("a current-thread runtime's console lists its tasks while block_on runs") {
  std::string path = socket_path("ct");
  RuntimeOptions options = with_console(path);
  Runtime rt = Runtime::current_thread(options);
  std::atomic<bool> done{false};
  std::optional<ConsoleSnapshot> seen;
  auto waiter = rt.spawn(pending_future(), "idle one");
  std::thread console([&] {
    seen = parse_console_snapshot(read_console(path));
    done.store(true);
  });
  // The executor's thread answers between tasks: keep it turning.
  rt.block_on(poll_fn<void>([&](Context& cx) -> Poll<void> {
    if (done.load()) return ready();
    cx.waker().wake_by_ref();
    return pending;
  }));
  console.join();
  REQUIRE(seen);
  REQUIRE(seen->tasks);
  REQUIRE(seen->tasks->size() == 1);
  CHECK((*seen->tasks)[0].name == "idle one");
  waiter.abort();
}

TEST_CASE("a current-thread runtime that is not running still gives its metrics, and says its tasks are unavailable") {
  std::string path = socket_path("ct-idle");
  RuntimeOptions options = with_console(path);
  Runtime rt = Runtime::current_thread(options);
  ConsoleSnapshot s = parse_console_snapshot(read_console(path));  // nobody is in block_on
  CHECK(s.metrics.executor.workers == 1);
  CHECK_FALSE(s.tasks);
}

TEST_CASE("the console answers while a task blocks the only worker") {
  std::string path = socket_path("blocked");
  RuntimeOptions options = with_console(path);
  Runtime rt = Runtime::current_thread(options);
  std::atomic<bool> release{false};
  std::optional<ConsoleSnapshot> seen;
  std::thread console([&] {
    seen = parse_console_snapshot(read_console(path));
    release.store(true);
  });
  rt.block_on(lazy([&] {
    while (!release.load()) std::this_thread::yield();  // a poll that does not return until the console answered
  }));
  console.join();
  REQUIRE(seen);
  CHECK_FALSE(seen->tasks);
  CHECK(seen->metrics.executor.workers == 1);
}

TEST_CASE("a client that never reads cannot keep the next one from its snapshot") {
  std::string path = socket_path("slow");
  RuntimeOptions options = with_console(path);
  Runtime rt = Runtime::multi_thread(1, options);
  // Enough tasks that a snapshot (about 75 bytes a task) is larger than
  // a Unix socket's buffer (208 KiB by default).
  std::vector<JoinHandle<void>> tasks;
  for (int i = 0; i < 5'000; ++i) tasks.push_back(rt.spawn(pending_future(), "a task with a long enough name"));
  int silent = attach(path);
  REQUIRE(silent >= 0);
  auto started = std::chrono::steady_clock::now();
  ConsoleSnapshot s = parse_console_snapshot(read_console(path));
  CHECK(s.tasks->size() == 5'000);
  CHECK(std::chrono::steady_clock::now() - started < 10s);  // the silent one had its 2 s, no more
  ::close(silent);
  for (auto& t : tasks) t.abort();
}

TEST_CASE("a client that sends garbage gets the snapshot all the same") {
  std::string path = socket_path("garbage");
  RuntimeOptions options = with_console(path);
  Runtime rt = Runtime::multi_thread(1, options);
  int fd = attach(path);
  REQUIRE(fd >= 0);
  std::string junk(100'000, 'x');
  (void)::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  CHECK(parse_console_snapshot(text).metrics.executor.workers == 1);
}

TEST_CASE("a console out of file descriptors waits without spinning, and answers its client once they free up") {
  // In a child: its limit on open files is lowered, and its threads stay its own.
  test::Death child = test::run_in_child([] {
    std::string path = socket_path("out-of-fds");
    Runtime rt = Runtime::multi_thread(1, with_console(path));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    int client = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval patience{10, 0};
    ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
    std::optional<test::HoldEveryFd> hold(std::in_place);
    // The connection waits in the backlog: the console cannot accept it.
    bool connected = ::connect(client, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    double before = test::process_cpu_ms();
    std::this_thread::sleep_for(400ms);
    double cpu_ms = test::process_cpu_ms() - before;
    char first;
    bool answered_while_out = ::recv(client, &first, 1, MSG_DONTWAIT | MSG_PEEK) > 0;
    hold.reset();
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(client, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
    ::close(client);
    bool parsed = false;
    try {
      parsed = parse_console_snapshot(text).metrics.executor.workers == 1;
    } catch (const std::exception&) {
    }
    std::fprintf(stderr, "RESULT %d %d %.1f %d\n", connected, answered_while_out, cpu_ms, parsed);
  });
  INFO(child.stderr_text);
  int connected = -1, answered_while_out = -1, parsed = -1;
  double cpu_ms = -1;
  std::size_t at = child.stderr_text.find("RESULT ");
  REQUIRE(at != std::string::npos);
  std::sscanf(child.stderr_text.c_str() + at, "RESULT %d %d %lf %d", &connected, &answered_while_out, &cpu_ms, &parsed);
  CHECK(connected == 1);
  CHECK(answered_while_out == 0);
  CHECK(cpu_ms >= 0);
  CHECK(cpu_ms < 100);  // it waits 100 ms between tries; a spin burns the whole 400 ms
  CHECK(parsed == 1);   // the same client, served once descriptors came back
}

TEST_CASE("a socket path a live runtime listens on is refused, and a stale one is taken over") {
  std::string path = socket_path("taken");
  RuntimeOptions options = with_console(path);
  {
    Runtime first = Runtime::multi_thread(1, options);
    std::string message = "the console socket " + path + " is in use: another runtime listens on it";
    CHECK_THROWS_WITH_AS(Runtime::multi_thread(1, options), doctest::Contains(message.c_str()), std::system_error);
    CHECK(parse_console_snapshot(read_console(path)).metrics.executor.workers == 1);  // the first still answers
  }
  CHECK_FALSE(exists(path));  // removed with its runtime
  // A socket file whose owner died without removing it.
  int stale = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  REQUIRE(::bind(stale, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
  ::close(stale);
  REQUIRE(exists(path));
  Runtime second = Runtime::current_thread(options);
  CHECK(parse_console_snapshot(read_console(path)).metrics.executor.workers == 1);
}

TEST_CASE("a console socket path too long for a Unix socket is refused") {
  RuntimeOptions options;
  options.console_socket = "/tmp/" + std::string(200, 'p');
  CHECK_THROWS_AS(Runtime::current_thread(options), std::invalid_argument);
}

TEST_CASE("destroying a runtime ends its console at once, even with a client attached that does not read") {
  std::string path = socket_path("shutdown");
  std::optional<Runtime> rt = Runtime::multi_thread(1, with_console(path));
  std::vector<JoinHandle<void>> tasks;
  for (int i = 0; i < 5'000; ++i) tasks.push_back(rt->spawn(pending_future(), "a task with a long enough name"));
  int silent = attach(path);
  REQUIRE(silent >= 0);
  std::this_thread::sleep_for(50ms);  // the console writes to it, more than a socket's buffer holds
  auto started = std::chrono::steady_clock::now();
  rt.reset();
  CHECK(std::chrono::steady_clock::now() - started < 1900ms);  // not the client's 2 s
  CHECK_FALSE(exists(path));
  ::close(silent);
}

TEST_CASE("POLLUX_CONSOLE opens a console, and a second runtime that cannot have it runs without one") {
  std::string path = socket_path("env");
  ::setenv("POLLUX_CONSOLE", path.c_str(), 1);
  {
    Runtime first = Runtime::current_thread();
    Runtime second = Runtime::current_thread();  // says why on stderr, and runs
    CHECK(first.console_socket() == path);
    CHECK(second.console_socket().empty());
    CHECK(second.block_on(ready_future(3)) == 3);
  }
  ::unsetenv("POLLUX_CONSOLE");
}

TEST_CASE("a regular file at the console's path is refused and left as it was") {
  std::string path = socket_path("regular");
  {
    std::FILE* file = std::fopen(path.c_str(), "w");
    REQUIRE(file != nullptr);
    std::fputs("precious", file);
    std::fclose(file);
  }
  CHECK_THROWS_WITH_AS(Runtime::current_thread(with_console(path)), doctest::Contains("is a file that is not a socket"),
                       std::system_error);
  struct stat after {};
  REQUIRE(::stat(path.c_str(), &after) == 0);
  CHECK(S_ISREG(after.st_mode));
  CHECK(after.st_size == 8);
  ::unlink(path.c_str());
}

TEST_CASE("a directory at the console's path is refused with a message of its own") {
  std::string path = socket_path("directory");
  REQUIRE(::mkdir(path.c_str(), 0700) == 0);
  CHECK_THROWS_WITH_AS(Runtime::current_thread(with_console(path)), doctest::Contains("is a directory"),
                       std::system_error);
  struct stat after {};
  CHECK(::stat(path.c_str(), &after) == 0);
  ::rmdir(path.c_str());
}

TEST_CASE("a runtime at exit leaves alone a socket that another runtime bound at its path since") {
  std::string path = socket_path("replaced");
  std::optional<Runtime> first(Runtime::current_thread(with_console(path)));
  // Someone removes the first socket and another runtime takes the path.
  REQUIRE(::unlink(path.c_str()) == 0);
  Runtime second = Runtime::current_thread(with_console(path));
  first.reset();
  REQUIRE(exists(path));
  CHECK(parse_console_snapshot(read_console(path)).metrics.executor.workers == 1);  // the second still answers
}

TEST_CASE("printable escapes the control bytes of a task name, so it cannot drive the terminal") {
  CHECK(printable("worker 1") == "worker 1");
  CHECK(printable("\x1b[2Jevil") == "\\x1b[2Jevil");
  CHECK(printable("two\nlines\r\tand\x7f") == "two\\nlines\\x0d\\tand\\x7f");
  CHECK(printable("back\\slash") == "back\\\\slash");
  CHECK(printable("caf\xc3\xa9") == "caf\xc3\xa9");  // UTF-8 passes through
}
