// ExitStatus: how a child process ended (an exit code or a signal), as
// waitid(2) reported it. A plain value.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <optional>

namespace pollux::process {

/// How a child ended: exited with a code, or killed by a signal.
class ExitStatus {
 public:
  /// A child that called exit(code).
  static ExitStatus exited(int code) noexcept { return ExitStatus(code, 0); }
  /// A child that a signal ended.
  static ExitStatus signaled(int signal) noexcept { return ExitStatus(0, signal); }

  /// Whether it exited with code 0.
  bool success() const noexcept { return signal_ == 0 && code_ == 0; }
  /// The exit code, or nullopt when a signal ended it.
  std::optional<int> code() const noexcept { return signal_ == 0 ? std::optional<int>(code_) : std::nullopt; }
  /// The signal that ended it, or nullopt when it exited.
  std::optional<int> signal() const noexcept { return signal_ != 0 ? std::optional<int>(signal_) : std::nullopt; }

  /// Equal when both exited with the same code or died of the same signal.
  bool operator==(const ExitStatus&) const = default;

 private:
  ExitStatus(int code, int signal) noexcept : code_(code), signal_(signal) {}
  int code_;
  int signal_;
};

}  // namespace pollux::process
