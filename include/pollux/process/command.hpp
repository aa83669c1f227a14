// Command: what to run (program, arguments, environment, working
// directory, stdio), then spawn() for a Child, or the futures status() and
// output(). spawn() starts the process at the call, on the caller's thread
// (posix_spawn is a vfork and an exec: no blocking wait on the child);
// status() and output() start it at their first poll. A program that cannot
// start (missing, not executable, no process slot, no descriptor for the
// pipes) is a std::system_error naming it, and leaves nothing behind.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/process/child.hpp"

namespace pollux::process {

/// Where one of a child's standard streams goes.
enum class Stdio : unsigned char {
  Inherit,  ///< the parent's own descriptor
  Piped,    ///< a pipe to the parent: Child::take_stdin() and the like
  Null,     ///< /dev/null
};

/// What a finished child said: its status and everything it wrote to stdout and stderr.
struct Output {
  /// How it ended.
  ExitStatus status = ExitStatus::exited(0);
  /// All of its stdout.
  std::string stdout_data;
  /// All of its stderr.
  std::string stderr_data;
};

class OutputFuture;
class StatusFuture;

/// A process to start: a program, searched on PATH when it has no '/'.
class Command {
 public:
  /// The program to run: its argv[0] too.
  explicit Command(std::string program) : program_(std::move(program)) {}

  /// Adds an argument.
  Command& arg(std::string value) & {
    args_.push_back(std::move(value));
    return *this;
  }
  /// Adds an argument (to a temporary Command: `Command("sh").arg("-c")`).
  Command&& arg(std::string value) && { return std::move(arg(std::move(value))); }
  /// Sets an environment variable for the child.
  Command& env(std::string key, std::string value) &;
  /// The same, on a temporary.
  Command&& env(std::string key, std::string value) && { return std::move(env(std::move(key), std::move(value))); }
  /// Removes an environment variable from the child's.
  Command& env_remove(std::string key) &;
  /// The same, on a temporary.
  Command&& env_remove(std::string key) && { return std::move(env_remove(std::move(key))); }
  /// Starts the child with an empty environment (and what env() adds).
  Command& env_clear() & {
    clear_env_ = true;
    env_.clear();
    return *this;
  }
  /// The same, on a temporary.
  Command&& env_clear() && { return std::move(env_clear()); }
  /// The child's working directory.
  Command& current_dir(std::string dir) & {
    cwd_ = std::move(dir);
    return *this;
  }
  /// The same, on a temporary.
  Command&& current_dir(std::string dir) && { return std::move(current_dir(std::move(dir))); }
  /// Where its stdin comes from (spawn's default: Inherit).
  Command& stdin_from(Stdio how) & { return set(stdin_, how); }
  /// The same, on a temporary.
  Command&& stdin_from(Stdio how) && { return std::move(stdin_from(how)); }
  /// Where its stdout goes (spawn's default: Inherit).
  Command& stdout_to(Stdio how) & { return set(stdout_, how); }
  /// The same, on a temporary.
  Command&& stdout_to(Stdio how) && { return std::move(stdout_to(how)); }
  /// Where its stderr goes (spawn's default: Inherit).
  Command& stderr_to(Stdio how) & { return set(stderr_, how); }
  /// The same, on a temporary.
  Command&& stderr_to(Stdio how) && { return std::move(stderr_to(how)); }
  /// Whether a Child destroyed unwaited is killed (SIGKILL) before it is reaped (default: no).
  Command& kill_on_drop(bool on) & {
    kill_on_drop_ = on;
    return *this;
  }
  /// The same, on a temporary.
  Command&& kill_on_drop(bool on) && { return std::move(kill_on_drop(on)); }

  /// Starts the child now. Throws std::system_error naming the program when
  /// it cannot start. Out of descriptors, it first reaps the dropped
  /// children that have ended (their pidfds), then tries once more.
  Child spawn() const;
  /// A future of its ExitStatus: started at the first poll with stdio inherited unless set.
  StatusFuture status() const;
  /// A future of its Output: started at the first poll, stdout and stderr
  /// piped and read to their ends, stdin /dev/null unless set.
  OutputFuture output() const;

  /// The program's name, as given.
  const std::string& program() const noexcept { return program_; }

 private:
  Child spawn_once() const;
  Command& set(std::optional<Stdio>& field, Stdio how) {
    field = how;
    return *this;
  }

  std::string program_;
  std::vector<std::string> args_;
  std::vector<std::pair<std::string, std::optional<std::string>>> env_;  // nullopt: removed
  bool clear_env_ = false;
  std::optional<std::string> cwd_;
  std::optional<Stdio> stdin_;
  std::optional<Stdio> stdout_;
  std::optional<Stdio> stderr_;
  bool kill_on_drop_ = false;

  friend class OutputFuture;
  friend class StatusFuture;
};

/// What Command::status() returns: the child started at the first poll, Ready with how it ended.
/// Destroyed before that, the child is reaped (or killed, with kill_on_drop) as a dropped Child is.
class [[nodiscard("futures do nothing unless polled")]] StatusFuture {
 public:
  using Output = ExitStatus;
  /// The run of `command`.
  explicit StatusFuture(Command command) : command_(std::move(command)) {}
  StatusFuture(StatusFuture &&) = default;
  StatusFuture& operator=(StatusFuture&&) = delete;
  /// Starts the child at the first poll; Ready once it ended.
  Poll<ExitStatus> poll(Context & cx);

 private:
  Command command_;
  std::optional<Child> child_;
};

/// What Command::output() returns: the child started at the first poll,
/// its stdout and stderr read as they come (neither pipe can fill and stall
/// it), Ready with both and the status once it ended. Destroyed before
/// that, the child is reaped (or killed, with kill_on_drop) as a dropped Child is.
class [[nodiscard("futures do nothing unless polled")]] OutputFuture {
 public:
  using Output = process::Output;
  /// The run of `command`.
  explicit OutputFuture(Command command) : command_(std::move(command)) {}
  OutputFuture(OutputFuture &&) = default;
  OutputFuture& operator=(OutputFuture&&) = delete;
  /// Starts the child at the first poll; Ready once both pipes ended and it exited.
  Poll<process::Output> poll(Context & cx);

 private:
  enum class State : unsigned char { Start, Running, Done };
  // Reads what `pipe` has into `into` until it would wait (false) or ends (true).
  static bool drain(Context & cx, std::optional<ChildOutput> & pipe, std::string & into);

  State state_ = State::Start;
  Command command_;
  std::optional<Child> child_;
  std::optional<ChildOutput> out_;
  std::optional<ChildOutput> err_;
  process::Output result_;
};

inline StatusFuture Command::status() const { return StatusFuture(*this); }
inline OutputFuture Command::output() const { return OutputFuture(*this); }

}  // namespace pollux::process
