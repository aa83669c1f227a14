// Unix signals as a Stream and a future: signal::signal(SIGTERM) is a
// stream with one item per delivery (deliveries that come faster than they
// are read merge into one, as tokio's), and signal::ctrl_c() a future of
// the next SIGINT, so that a server can shut down gracefully.
//
// A signal is caught from the moment the first Signal for it is made, by a
// handler that counts the delivery and writes a byte to a pipe; one thread,
// started with the first Signal and blocked on that pipe when idle (no busy
// loop), wakes every Signal waiting for that signal, outside any lock. A
// handler rather than a signalfd: a signalfd sees only signals blocked in
// every thread of the process, and a library cannot block them in threads
// it did not make; one unblocked thread would take the default action.
// Signals a program never asks for keep their default action; one it asked
// for stays caught after its last Signal is gone (its deliveries are then
// counted and dropped), as with tokio.
// Any runtime (or none) may poll a Signal: it keeps rule 2 with a waker
// slot of its own. One allocation per Signal, none per delivery or poll.
//
// signal::cancel_on(SIGTERM, token) is the way to cancel a
// CancellationToken on a signal: CancellationToken::cancel() takes a lock
// and wakes tasks, which a signal handler must not do (a handler that runs
// while its thread holds that lock deadlocks), so it is cancelled from a
// task instead, once the signal is delivered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstdint>
#include <memory>
#include <optional>

#include "pollux/core/future.hpp"
#include "pollux/stream/stream.hpp"
#include "pollux/sync/cancellation_token.hpp"

namespace pollux::signal {

namespace detail {
struct Listener;
}

/// A stream of the deliveries of one signal; each item is its number. It
/// never ends.
class [[nodiscard("streams do nothing unless polled")]] Signal {
 public:
  using Item = int;

  /// Catches `signo` from now on. Throws std::invalid_argument for a
  /// number that is not a signal or one that cannot be caught (SIGKILL,
  /// SIGSTOP) or must not be (SIGSEGV, SIGBUS, SIGILL, SIGFPE).
  explicit Signal(int signo);
  Signal(Signal &&) noexcept;
  Signal& operator=(Signal&&) noexcept;
  ~Signal();

  /// Ready once the signal was delivered after this Signal was made (or
  /// after its previous item).
  Poll<std::optional<int>> poll_next(Context & cx);

  /// The signal this stream listens to.
  int number() const noexcept { return signo_; }

 private:
  int signo_;
  std::unique_ptr<detail::Listener> listener_;
};

/// The deliveries of `signo` from now on, as a stream.
inline Signal signal(int signo) { return Signal(signo); }

/// The future ctrl_c() returns: Ready at the next SIGINT.
class [[nodiscard("futures do nothing unless polled")]] CtrlC {
 public:
  using Output = void;

  CtrlC() : signal_(2 /* SIGINT */) {}

  /// Ready once SIGINT arrives.
  Poll<void> poll(Context & cx) {
    if (signal_.poll_next(cx).is_pending()) return pending;
    return ready();
  }

 private:
  Signal signal_;
};

/// A future of the next SIGINT (Ctrl-C in a terminal), caught from now on.
inline CtrlC ctrl_c() { return CtrlC(); }

/// The future cancel_on returns: it cancels its token at the first
/// delivery of its signal, then is Ready.
class [[nodiscard("futures do nothing unless polled")]] CancelOnSignal {
 public:
  using Output = void;

  /// Catches `signo` from now on (as Signal(signo)) for `token`.
  CancelOnSignal(int signo, CancellationToken token) : signal_(signo), token_(std::move(token)) {}

  /// Ready once the signal came and the token is cancelled.
  Poll<void> poll(Context & cx) {
    if (signal_.poll_next(cx).is_pending()) return pending;
    token_.cancel();
    return ready();
  }

 private:
  Signal signal_;
  CancellationToken token_;
};

/// Cancels `token` when `signo` is delivered, from the task that runs
/// this future rather than from the signal handler, where cancel() is not
/// safe: `rt.spawn(signal::cancel_on(SIGTERM, shutdown));`. The signal is
/// caught from now on, so one that comes before the first poll counts.
inline CancelOnSignal cancel_on(int signo, CancellationToken token) { return CancelOnSignal(signo, std::move(token)); }

}  // namespace pollux::signal
