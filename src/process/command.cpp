// Command::spawn: posix_spawn with the stdio, environment and directory
// asked for, the signal mask and dispositions reset, then a pidfd for the
// child. Every descriptor made on the way is owned until it is handed on,
// so a failure at any step closes all of them.

#include "pollux/process/command.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>
#include <string>
#include <system_error>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/try_ready.hpp"

extern char** environ;

namespace pollux::process {

namespace {

[[noreturn]] void fail(int error, const std::string& program, const char* step) {
  throw std::system_error(error, std::generic_category(), "pollux::process::Command::spawn(" + program + "): " + step);
}

// A descriptor closed at the end of its scope unless released.
class OwnedFd {
 public:
  OwnedFd() noexcept = default;
  explicit OwnedFd(int fd) noexcept : fd_(fd) {}
  OwnedFd(OwnedFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  OwnedFd& operator=(OwnedFd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~OwnedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }
  int release() noexcept { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

// One standard stream of the child: the descriptor it gets and, for a pipe, the parent's end.
struct StdioEnds {
  OwnedFd child;   // -1: inherit
  OwnedFd parent;  // a pipe's other end
};

StdioEnds make_stdio(Stdio how, bool child_reads, const std::string& program) {
  StdioEnds ends;
  if (how == Stdio::Null) {
    int fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (fd < 0) fail(errno, program, "open /dev/null");
    ends.child = OwnedFd(fd);
  } else if (how == Stdio::Piped) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) fail(errno, program, "pipe2");
    OwnedFd read_end(fds[0]);
    OwnedFd write_end(fds[1]);
    ends.child = child_reads ? std::move(read_end) : std::move(write_end);
    ends.parent = child_reads ? std::move(write_end) : std::move(read_end);
  }
  // A descriptor below 3 (the parent's own stdio was closed) would be
  // overwritten by the child's dup2s: move it out of the way.
  if (ends.child.get() >= 0 && ends.child.get() < 3) {
    int moved = ::fcntl(ends.child.get(), F_DUPFD_CLOEXEC, 3);
    if (moved < 0) fail(errno, program, "fcntl(F_DUPFD_CLOEXEC)");
    ends.child = OwnedFd(moved);
  }
  return ends;
}

// posix_spawn's attributes and file actions, destroyed at the end of the scope.
struct SpawnSetup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

Command& Command::env(std::string key, std::string value) & {
  env_.emplace_back(std::move(key), std::move(value));
  return *this;
}

Command& Command::env_remove(std::string key) & {
  env_.emplace_back(std::move(key), std::nullopt);
  return *this;
}

Child Command::spawn() const {
  try {
    return spawn_once();
  } catch (const std::system_error& e) {
    // Out of descriptors: orphans that have ended may hold some (a pidfd
    // each until the reaper gets to them). Reap those here and try once more.
    if (e.code() != std::errc::too_many_files_open && e.code() != std::errc::too_many_files_open_in_system) throw;
    detail::reap_orphans_now();
    return spawn_once();
  }
}

Child Command::spawn_once() const {
  StdioEnds in = make_stdio(stdin_.value_or(Stdio::Inherit), true, program_);
  StdioEnds out = make_stdio(stdout_.value_or(Stdio::Inherit), false, program_);
  StdioEnds err = make_stdio(stderr_.value_or(Stdio::Inherit), false, program_);

  SpawnSetup setup;
  // The runtime's signal handling may block signals in this thread, and a
  // caller may ignore some: the child starts with none blocked and every
  // disposition at its default, as a freshly exec'd program expects.
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&setup.attr, &none);
  sigset_t all;
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  posix_spawnattr_setsigdefault(&setup.attr, &all);
  posix_spawnattr_setflags(&setup.attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  if (in.child.get() >= 0) posix_spawn_file_actions_adddup2(&setup.actions, in.child.get(), 0);
  if (out.child.get() >= 0) posix_spawn_file_actions_adddup2(&setup.actions, out.child.get(), 1);
  if (err.child.get() >= 0) posix_spawn_file_actions_adddup2(&setup.actions, err.child.get(), 2);
  if (cwd_) posix_spawn_file_actions_addchdir_np(&setup.actions, cwd_->c_str());

  std::vector<char*> argv;
  argv.reserve(args_.size() + 2);
  argv.push_back(const_cast<char*>(program_.c_str()));
  for (const std::string& a : args_) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  std::vector<std::string> env_storage;
  std::vector<char*> envp;
  char** env_to_use = environ;
  if (clear_env_ || !env_.empty()) {
    auto overridden = [&](std::string_view entry) {
      std::string_view key = entry.substr(0, entry.find('='));
      for (const auto& [k, v] : env_) {
        if (k == key) return true;
      }
      return false;
    };
    if (!clear_env_) {
      for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        if (!overridden(*e)) env_storage.emplace_back(*e);
      }
    }
    for (std::size_t i = 0; i < env_.size(); ++i) {
      const auto& [key, value] = env_[i];
      bool later = false;  // the last setting of a key wins
      for (std::size_t j = i + 1; j < env_.size(); ++j) later = later || env_[j].first == key;
      if (value && !later) env_storage.push_back(key + "=" + *value);
    }
    for (std::string& e : env_storage) envp.push_back(e.data());
    envp.push_back(nullptr);
    env_to_use = envp.data();
  }

  // The parent's ends are wrapped before the child exists, so that nothing
  // after the spawn can fail but the pidfd (they are close-on-exec: the
  // child never holds them).
  std::optional<ChildStdin> child_in;
  std::optional<ChildStdout> child_out;
  std::optional<ChildStderr> child_err;
  if (in.parent.get() >= 0) child_in.emplace(in.parent.release());
  if (out.parent.get() >= 0) child_out.emplace(out.parent.release());
  if (err.parent.get() >= 0) child_err.emplace(err.parent.release());

  pid_t pid = 0;
  bool search = program_.find('/') == std::string::npos;
  int rc = search ? ::posix_spawnp(&pid, program_.c_str(), &setup.actions, &setup.attr, argv.data(), env_to_use)
                  : ::posix_spawn(&pid, program_.c_str(), &setup.actions, &setup.attr, argv.data(), env_to_use);
  if (rc != 0) fail(rc, program_, rc == EAGAIN ? "no process slot left" : "cannot run it");

  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    // Running, but with no way to wait for it through the reactor: end it
    // and reap it here (it dies at once on SIGKILL), so nothing is left.
    int error = errno;
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    fail(error, program_, "pidfd_open");
  }
  return Child(pid, pidfd, program_, kill_on_drop_, std::move(child_in), std::move(child_out), std::move(child_err));
}

Poll<ExitStatus> StatusFuture::poll(Context& cx) {
  if (!child_) child_.emplace(command_.spawn());
  return child_->poll_wait(cx);
}

bool OutputFuture::drain(Context& cx, std::optional<ChildOutput>& pipe, std::string& into) {
  if (!pipe) return true;
  for (;;) {
    std::size_t used = into.size();
    into.resize(used + 64 * 1024 > into.capacity() ? used + 64 * 1024 : into.capacity());
    Poll<std::size_t> got =
        pipe->poll_read(cx, std::as_writable_bytes(std::span(into.data() + used, into.size() - used)));
    into.resize(used + (got.is_ready() ? got.value() : 0));
    if (!got.is_ready()) return false;
    if (got.value() == 0) {
      pipe.reset();
      return true;
    }
  }
}

Poll<process::Output> OutputFuture::poll(Context& cx) {
  switch (state_) {
    case State::Start: {
      Command command = command_;
      if (!command.stdin_) command.stdin_ = Stdio::Null;
      command.stdout_ = Stdio::Piped;
      command.stderr_ = Stdio::Piped;
      child_.emplace(command.spawn());
      out_ = child_->take_stdout();
      err_ = child_->take_stderr();
      state_ = State::Running;
      [[fallthrough]];
    }
    case State::Running: {
      bool out_done = drain(cx, out_, result_.stdout_data);
      bool err_done = drain(cx, err_, result_.stderr_data);
      if (!out_done || !err_done) return pending;
      POLLUX_TRY_READY_ASSIGN(result_.status, child_->poll_wait(cx));
      state_ = State::Done;
      return Poll<process::Output>(std::in_place, std::move(result_));
    }
    case State::Done:
      break;
  }
  POLLUX_CHECK_NOT_DONE(OutputFuture, false);
  return pending;
}

}  // namespace pollux::process
