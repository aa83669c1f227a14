// Child: a running child process, waited on through its pidfd, which the
// reactor watches like a socket (no SIGCHLD handler, so no clash with
// another library's). Its piped stdin, stdout and stderr are taken with
// take_stdin() and the like.
// A Child destroyed before it was waited for is never left a zombie: if
// kill_on_drop was set it is killed first, and then it is reaped, at once
// if it has exited, else by pollux's reaper thread (started at the first
// such child, asleep in epoll_wait on the pidfds it was given; see
// src/process/reaper.cpp). wait() is cancel-safe: destroyed before Ready it
// takes its waker back, and a later wait() or try_wait() still gets the status.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <sys/types.h>

#include <optional>
#include <string>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/io/detail/io_source.hpp"
#include "pollux/io/interest.hpp"
#include "pollux/io/io_future.hpp"
#include "pollux/process/child_pipe.hpp"
#include "pollux/process/exit_status.hpp"

namespace pollux::process {

/// A child process started by Command::spawn().
class Child {
 public:
  class WaitOp;

  /// What Command::spawn makes: the process `pid` and its pidfd (owned),
  /// its pipes, and whether to kill it when the Child goes unwaited.
  Child(pid_t pid, int pidfd, std::string program, bool kill_on_drop, std::optional<ChildStdin> in,
        std::optional<ChildStdout> out, std::optional<ChildStderr> err) noexcept;
  Child(Child&&) noexcept = default;
  Child& operator=(Child&&) = delete;
  /// Kills it if kill_on_drop was set, then reaps it now or hands it to the reaper.
  ~Child();

  /// The process id (still the child's until it is reaped).
  pid_t pid() const noexcept { return pid_; }

  /// The write end of its stdin, if it was piped and not taken yet.
  std::optional<ChildStdin> take_stdin() { return std::exchange(stdin_, std::nullopt); }
  /// The read end of its stdout, if it was piped and not taken yet.
  std::optional<ChildStdout> take_stdout() { return std::exchange(stdout_, std::nullopt); }
  /// The read end of its stderr, if it was piped and not taken yet.
  std::optional<ChildStderr> take_stderr() { return std::exchange(stderr_, std::nullopt); }

  /// A future of its ExitStatus. Closes its stdin pipe first (if still
  /// here), so a child reading its input to the end does not wait on us.
  IoFuture<WaitOp> wait() noexcept;
  /// Its ExitStatus if it has ended (reaping it), else nullopt; never waits.
  std::optional<ExitStatus> try_wait();
  /// Sends SIGKILL (nothing once it was reaped: the pid may be another's by then).
  void kill() { send_signal(9); }
  /// Sends `signal` through the pidfd, so never to a process that reused the pid.
  void send_signal(int signal);

  /// For wait(): Ready with the status once the pidfd says the child ended.
  Poll<ExitStatus> poll_wait(Context& cx);

 private:
  pid_t pid_;
  pollux::detail::IoSource pidfd_;  // readable once the child ended
  std::string program_;
  bool kill_on_drop_;
  std::optional<ExitStatus> status_;  // once reaped
  std::optional<ChildStdin> stdin_;
  std::optional<ChildStdout> stdout_;
  std::optional<ChildStderr> stderr_;
};

/// The operation of Child::wait().
class Child::WaitOp {
 public:
  using Output = ExitStatus;
  /// The wait for `child`, which must outlive the future.
  explicit WaitOp(Child* child) noexcept : child_(child) {}
  /// Ready with the ExitStatus once the child ended.
  Poll<ExitStatus> poll(Context& cx) { return child_->poll_wait(cx); }
  /// Takes the pidfd's waker back.
  void abandon() noexcept { child_->pidfd_.abandon(Interest::Read); }

 private:
  Child* child_;
};

inline IoFuture<Child::WaitOp> Child::wait() noexcept { return IoFuture<WaitOp>(this); }

namespace detail {
/// Gives a child that nobody will wait for to the reaper, which reaps it
/// once it ends and closes `pidfd` (src/process/reaper.cpp).
void reap_orphan(int pidfd) noexcept;
/// How many children the reaper holds now (for tests and the metrics).
std::size_t orphans_pending() noexcept;
/// Reaps, on this thread, every orphan that has ended (closing its pidfd):
/// what a spawn that ran out of descriptors does before it tries again.
void reap_orphans_now() noexcept;
}  // namespace detail

}  // namespace pollux::process
