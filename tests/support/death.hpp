// Runs a piece of a test in a child process and reports how it ended and
// what it printed on stderr: for checks that stop the program by design
// (the debug contract checks, UnhandledException::Terminate).
#pragma once

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

namespace test {

struct Death {
  bool aborted = false;  // died of SIGABRT (abort, std::terminate)
  std::string stderr_text;
};

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
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof buffer)) > 0) death.stderr_text.append(buffer, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  death.aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
  return death;
}

}  // namespace test
