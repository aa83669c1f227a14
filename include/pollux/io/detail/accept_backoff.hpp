// What keeps a listener's incoming() stream alive through errors that are
// not the listener's fault. A connection that failed while it waited in the
// backlog (the peer reset it, a firewall refused it) is skipped. Running
// out of descriptors or kernel memory pauses accepting for a while instead
// of ending the stream or spinning on a readiness that stays set: the
// pause is a Sleep inside the stream (no allocation, rule 4: the stream is
// not moved after its first poll), it doubles up to a ceiling while the
// shortage lasts, and the shortage is reported on stderr once per episode.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <system_error>
#include <type_traits>

#include "pollux/core/context.hpp"
#include "pollux/core/detail/chrono.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/time/instant.hpp"
#include "pollux/time/sleep.hpp"

namespace pollux::detail {

class AcceptBackoff {
 public:
  // The first pause, and the longest: while descriptors stay short the
  // stream looks again 5, 10, 20 ... 640 ms later, then every 640 ms.
  static constexpr std::chrono::milliseconds kFirstPause{5};
  static constexpr std::chrono::milliseconds kLongestPause{640};

  AcceptBackoff() noexcept = default;
  AcceptBackoff(AcceptBackoff&&) noexcept {}  // only before the first poll: nothing to carry
  AcceptBackoff& operator=(AcceptBackoff&&) = delete;

  // One poll of an incoming() stream: `accept(cx)` is the listener's
  // poll_accept. Pending while paused (the Sleep keeps the waker) or while
  // no connection waits (the listener keeps it); errors absorb() does not
  // take are thrown.
  template <class Accept>
  std::invoke_result_t<Accept&, Context&> poll_accept(Context& cx, Accept&& accept) {
    for (;;) {
      if (poll_resume(cx).is_pending()) return pending;
      try {
        auto accepted = accept(cx);
        if (accepted.is_ready()) accepted_one();
        return accepted;
      } catch (const std::system_error& error) {
        if (!absorb(error)) throw;  // else skipped, or paused: look again
      }
    }
  }

  // Ready when accepting may go on; Pending (the waker kept by the Sleep)
  // while a pause lasts.
  Poll<void> poll_resume(Context& cx) {
    if (!paused_) return ready();
    if (pause_->poll(cx).is_pending()) return pending;
    paused_ = false;
    return ready();
  }

  // Whether accept's `error` leaves the stream going: true after skipping
  // one failed connection or starting a pause; false for anything else,
  // which the stream throws.
  bool absorb(const std::system_error& error) {
    if (error.code().category() != std::system_category()) return false;
    int code = error.code().value();
    if (is_connection_error(code)) return true;
    if (!is_resource_shortage(code)) return false;
    if (!reported_) {
      std::fprintf(stderr,
                   "pollux: %s; not accepting new connections for now (looking again after %lld ms, then up to every "
                   "%lld ms until it succeeds)\n",
                   error.what(), static_cast<long long>(next_.count()), static_cast<long long>(kLongestPause.count()));
      std::fflush(stderr);
      reported_ = true;
    }
    Instant until = now() + next_;
    if (pause_) {
      pause_->reset(until);
    } else {
      pause_.emplace(until);
    }
    paused_ = true;
    next_ = std::min(next_ * 2, std::chrono::duration_cast<std::chrono::milliseconds>(kLongestPause));
    return true;
  }

  // A connection came: a later shortage starts again from the first pause
  // and is reported again.
  void accepted_one() noexcept {
    next_ = kFirstPause;
    reported_ = false;
  }

 private:
  // Linux reports a connection's own network error from accept (accept(2):
  // "treat them like EAGAIN"), and EPERM when a firewall rule refused it.
  static bool is_connection_error(int code) noexcept {
    switch (code) {
      case ECONNABORTED:
      case EPERM:
      case EPROTO:
      case ENETDOWN:
      case ENOPROTOOPT:
      case EHOSTDOWN:
      case ENONET:
      case EHOSTUNREACH:
      case EOPNOTSUPP:
      case ENETUNREACH:
      case ECONNRESET:
      case ETIMEDOUT:
        return true;
      default:
        return false;
    }
  }
  // Out of descriptors (the process's or the system's) or kernel memory:
  // it passes when something is closed or freed, so wait, then try again.
  static bool is_resource_shortage(int code) noexcept {
    return code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM;
  }

  std::optional<Sleep> pause_;  // made on the first shortage, reset after
  bool paused_ = false;
  bool reported_ = false;
  std::chrono::milliseconds next_ = kFirstPause;
};

}  // namespace pollux::detail
