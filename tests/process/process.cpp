// pollux::process: spawning, waiting through the pidfd, pipes both ways,
// exit codes and signals, errors, and children dropped at every point
// leaving neither zombies nor descriptors behind.
#include <doctest/doctest.h>

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <pollux/process.hpp>

#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;
using process::Command;
using process::Stdio;

namespace {

// Children of this process that are zombies now (read from /proc).
int zombie_children() {
  int zombies = 0;
  DIR* proc = ::opendir("/proc");
  while (dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::ifstream stat(std::string("/proc/") + entry->d_name + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
    std::size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) != 2) continue;
    if (ppid == ::getpid() && state == 'Z') ++zombies;
  }
  ::closedir(proc);
  return zombies;
}

// Waits (up to 20 s) until the reaper holds no child.
bool reaper_drained() {
  auto give_up = std::chrono::steady_clock::now() + 20s;
  while (process::detail::orphans_pending() != 0) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

}  // namespace

TEST_CASE("output() gives a program's stdout and its status") {
  auto rt = Runtime::current_thread();
  auto out = rt.block_on(Command("sh").arg("-c").arg("echo hi").output());
  CHECK(out.status.success());
  CHECK(out.stdout_data == "hi\n");
  CHECK(out.stderr_data.empty());
}

TEST_CASE("a child dropped unwaited is reaped, never left a zombie") {
  auto rt = Runtime::current_thread();
  {
    auto child = Command("sh").arg("-c").arg("exit 0").spawn();
    CHECK(child.pid() > 0);
  }
  CHECK(reaper_drained());
  CHECK(zombie_children() == 0);
}

TEST_CASE("exit codes and signals are reported as such") {
  auto rt = Runtime::current_thread();
  auto three = rt.block_on(Command("sh").arg("-c").arg("exit 3").status());
  CHECK_FALSE(three.success());
  CHECK(three.code() == 3);
  CHECK_FALSE(three.signal().has_value());
  auto killed = rt.block_on(Command("sh").arg("-c").arg("kill -TERM $$").status());
  CHECK(killed.signal() == SIGTERM);
  CHECK_FALSE(killed.code().has_value());
}

TEST_CASE("kill() ends a running child, and wait() says it was SIGKILL") {
  auto rt = Runtime::current_thread();
  auto child = Command("sleep").arg("30").spawn();
  CHECK_FALSE(child.try_wait().has_value());
  child.kill();
  auto status = rt.block_on(child.wait());
  CHECK(status.signal() == SIGKILL);
  CHECK(child.try_wait() == status);
  child.kill();  // reaped: nothing is sent
}

TEST_CASE("a wait destroyed before the child ended leaves the status for the next wait") {
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  auto child = Command("sh").arg("-c").arg("sleep 0.05; exit 4").spawn();
  {
    auto first = child.wait();
    CHECK(test::poll_once(first).is_pending());
  }
  CHECK(rt.block_on(child.wait()).code() == 4);
}

TEST_CASE("a program that does not exist is an error naming it") {
  try {
    (void)Command("pollux-no-such-program").spawn();
    FAIL("no error");
  } catch (const std::system_error& e) {
    CHECK(e.code() == std::errc::no_such_file_or_directory);
    CHECK(std::string(e.what()).find("pollux-no-such-program") != std::string::npos);
  }
  CHECK_THROWS_AS((void)Command("/etc/passwd").spawn(), std::system_error);  // not executable
}

TEST_CASE("the environment and working directory reach the child") {
  auto rt = Runtime::current_thread();
  auto out = rt.block_on(Command("sh")
                             .arg("-c")
                             .arg("echo \"$POLLUX_A-$POLLUX_B\"; pwd")
                             .env("POLLUX_A", "one")
                             .env("POLLUX_B", "x")
                             .env_remove("POLLUX_B")
                             .current_dir("/")
                             .output());
  CHECK(out.stdout_data == "one-\n/\n");
  auto bare = rt.block_on(Command("/bin/sh").arg("-c").arg("echo \"[$HOME]\"").env_clear().output());
  CHECK(bare.stdout_data == "[]\n");
}

TEST_CASE("64 MiB pass through cat both ways at once") {
  auto rt = Runtime::current_thread();
  auto child = Command("cat").stdin_from(Stdio::Piped).stdout_to(Stdio::Piped).spawn();
  auto in = child.take_stdin();
  auto out = child.take_stdout();
  REQUIRE(in);
  REQUIRE(out);
  std::vector<std::byte> data(64 << 20);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 131 + (i >> 16));
  std::vector<std::byte> back;
  back.reserve(data.size());
  rt.block_on(join(write_all(*in, data) | then([&] { return shutdown(*in); }), read_to_end(*out, back)));
  CHECK(back == data);
  CHECK(rt.block_on(child.wait()).success());
}

TEST_CASE("a write to a child that closed its stdin is EPIPE, not SIGPIPE") {
  auto rt = Runtime::current_thread();
  auto child = Command("true").stdin_from(Stdio::Piped).spawn();
  auto in = child.take_stdin();
  CHECK(rt.block_on(child.wait()).success());
  std::vector<std::byte> data(1 << 20);
  try {
    rt.block_on(write_all(*in, data));
    FAIL("no error");
  } catch (const std::system_error& e) {
    CHECK(e.code() == std::errc::broken_pipe);
  }
}

TEST_CASE("with no descriptor left for its pipes a spawn is a clear error and leaks nothing") {
  auto rt = Runtime::current_thread();
  int before = test::open_fds();
  {
    test::HoldEveryFd hold;
    try {
      (void)Command("cat").stdin_from(Stdio::Piped).stdout_to(Stdio::Piped).stderr_to(Stdio::Piped).spawn();
      FAIL("no error");
    } catch (const std::system_error& e) {
      CHECK(e.code() == std::errc::too_many_files_open);
      CHECK(std::string(e.what()).find("cat") != std::string::npos);
    }
  }
  CHECK(test::open_fds() == before);
  CHECK(zombie_children() == 0);
}

TEST_CASE("10,000 children dropped at random points leave no zombie and no descriptor") {
  std::mt19937 rng(5);
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  (void)rt.block_on(Command("true").status());  // the reaper's own descriptors exist before counting
  { auto warm = Command("sleep").arg("1").kill_on_drop(true).spawn(); }
  REQUIRE(reaper_drained());
  int before = test::open_fds();
  constexpr int kChildren = 10000;
  for (int i = 0; i < kChildren; ++i) {
    bool kill = rng() % 2 == 0;
    Command command = kill ? Command("sleep").arg("30") : Command("true");
    command.kill_on_drop(kill);
    if (rng() % 3 == 0) command.stdout_to(Stdio::Piped).stdin_from(Stdio::Piped);
    auto child = command.spawn();
    switch (rng() % 3) {
      case 0:
        break;  // dropped at once, maybe before it even ran
      case 1: {
        auto wait = child.wait();
        (void)test::poll_once(wait);  // dropped while waiting
        break;
      }
      default:
        if (!kill) CHECK(rt.block_on(child.wait()).success());
        break;
    }
  }
  CHECK(reaper_drained());
  CHECK(zombie_children() == 0);
  CHECK(test::open_fds() == before);
}
