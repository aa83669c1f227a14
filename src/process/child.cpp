// Child: waitid(2) on the pidfd once the reactor says it is readable.

#include "pollux/process/child.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "pollux/core/try_ready.hpp"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

namespace pollux::process {

namespace {

ExitStatus status_of(const siginfo_t& info) noexcept {
  if (info.si_code == CLD_EXITED) return ExitStatus::exited(info.si_status);
  return ExitStatus::signaled(info.si_status);
}

// waitid(P_PIDFD, WNOHANG): the status if it ended (reaping it), else nullopt.
std::optional<ExitStatus> reap_now(int pidfd, const std::string& program) {
  siginfo_t info{};
  for (;;) {
    if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &info, WEXITED | WNOHANG) == 0) break;
    if (errno == EINTR) continue;
    pollux::detail::throw_io_error(errno, "pollux::process::Child(" + program + "): waitid");
  }
  if (info.si_pid == 0) return std::nullopt;  // still running
  return status_of(info);
}

}  // namespace

Child::Child(pid_t pid, int pidfd, std::string program, bool kill_on_drop, std::optional<ChildStdin> in,
             std::optional<ChildStdout> out, std::optional<ChildStderr> err) noexcept
    : pid_(pid),
      pidfd_(pidfd, pollux::detail::IoSource::StartNotReady{}),
      program_(std::move(program)),
      kill_on_drop_(kill_on_drop),
      stdin_(std::move(in)),
      stdout_(std::move(out)),
      stderr_(std::move(err)) {}

Child::~Child() {
  if (pidfd_.fd() < 0 || status_) return;  // moved from, or reaped
  if (kill_on_drop_) (void)::syscall(SYS_pidfd_send_signal, pidfd_.fd(), SIGKILL, nullptr, 0);
  detail::reap_orphan(pidfd_.release());
}

void Child::send_signal(int signal) {
  if (status_) return;  // reaped: the pid is not ours any more
  if (::syscall(SYS_pidfd_send_signal, pidfd_.fd(), signal, nullptr, 0) != 0 && errno != ESRCH) {
    pollux::detail::throw_io_error(errno, "pollux::process::Child(" + program_ + "): pidfd_send_signal");
  }
}

std::optional<ExitStatus> Child::try_wait() {
  if (!status_) status_ = reap_now(pidfd_.fd(), program_);
  return status_;
}

Poll<ExitStatus> Child::poll_wait(Context& cx) {
  stdin_.reset();  // a child reading its input to the end must see it end
  for (;;) {
    if (try_wait()) return ready(*status_);
    POLLUX_TRY_READY_ASSIGN(auto event, pidfd_.poll_ready(cx, Interest::Read, "pollux::process::Child::wait"));
    if (try_wait()) return ready(*status_);
    pidfd_.clear_readiness(event);  // a readiness from before it ended: wait for the next
  }
}

}  // namespace pollux::process
