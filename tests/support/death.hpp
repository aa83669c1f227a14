// Runs a piece of a test in a child process and reports how it ended and
// what it printed on stderr: for checks that stop the program by design
// (the debug contract checks, UnhandledException::Terminate).
#pragma once

#include <doctest/doctest.h>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <string>

namespace test {

struct Death {
  bool aborted = false;  // died of SIGABRT (abort, std::terminate)
  std::string stderr_text;
};

// How long a child may run: a child that hangs is killed and the test
// fails saying so, where waiting for it would stop the whole suite at its
// timeout with no word of which child hung.
inline constexpr std::chrono::seconds kChildDeadline{120};

template <class Fn>
Death run_in_child(Fn fn) {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // doctest's crash handler is inherited; the child must die of the
    // abort itself, not run the handler (which allocates in a signal).
    std::signal(SIGABRT, SIG_DFL);
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    fn();
    _exit(0);
  }
  close(pipe_fds[1]);
  Death death;
  char buffer[512];
  auto deadline = std::chrono::steady_clock::now() + kChildDeadline;
  bool hung = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd readable{pipe_fds[0], POLLIN, 0};
    int ready = left.count() > 0 ? ::poll(&readable, 1, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      hung = true;
      kill(pid, SIGKILL);
      break;
    }
    ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    death.stderr_text.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (hung)
    FAIL("the child process still ran after " << kChildDeadline.count()
                                              << " s: killed; its stderr: " << death.stderr_text);
  death.aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
  return death;
}

}  // namespace test
