// The reaper: children nobody will wait for (a Child destroyed unwaited)
// are reaped here, so none is left a zombie, with no SIGCHLD handler.
// One epoll instance holds their pidfds. A thread, started at the first
// orphan that has not ended yet, sleeps in epoll_wait on it and reaps each
// child as its pidfd turns readable; it uses no CPU while it waits. Where
// no thread can be started (none left), the orphans stay in the epoll set
// and each later orphan's hand-over reaps those that ended (epoll_wait
// with no timeout), so they are still reaped, only later; the same for an
// orphan the epoll set cannot take.

#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/process/child.hpp"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

namespace pollux::process::detail {

namespace {

class Reaper {
 public:
  static Reaper& instance() {
    static Reaper* reaper = new Reaper();  // never destroyed: its thread may be asleep in it at exit
    return *reaper;
  }

  void adopt(int pidfd) noexcept {
    if (reaped(pidfd)) return;  // it ended already: reaped and closed
    pending_.fetch_add(1, std::memory_order_relaxed);
    epoll_event event{};
    event.events = EPOLLIN | EPOLLONESHOT;
    event.data.fd = pidfd;
    if (epoll_ < 0 || ::epoll_ctl(epoll_, EPOLL_CTL_ADD, pidfd, &event) != 0) {
      // No room in the kernel for the watch: it waits in a list that each
      // later hand-over looks through.
      pollux::detail::MutexLock lock(mutex_);
      try {
        unwatched_.push_back(pidfd);
      } catch (const std::bad_alloc&) {
        ::close(pidfd);  // the last resort: the kernel reparents a zombie only when we exit
        pending_.fetch_sub(1, std::memory_order_relaxed);
      }
      return;
    }
    reap_unwatched();
    start_thread();
    // The thread hands over as well: children that ended since are reaped
    // here too, so a burst of orphans cannot outrun a reaper thread that a
    // loaded machine schedules late (each waiting pidfd is a descriptor).
    reap_ready(0);
  }

  // Reaps every orphan that has ended, now, on this thread.
  void reap_now() noexcept {
    reap_unwatched();
    if (epoll_ >= 0) reap_ready(0);
  }

  void reap_unwatched() noexcept {
    pollux::detail::MutexLock lock(mutex_);
    for (std::size_t i = 0; i < unwatched_.size();) {
      if (reaped(unwatched_[i])) {
        pending_.fetch_sub(1, std::memory_order_relaxed);
        unwatched_[i] = unwatched_.back();
        unwatched_.pop_back();
      } else {
        ++i;
      }
    }
  }

  std::size_t pending() const noexcept { return pending_.load(std::memory_order_relaxed); }

 private:
  Reaper() : epoll_(::epoll_create1(EPOLL_CLOEXEC)) {}

  // waitid(WNOHANG): whether the child ended; if so it is reaped and its pidfd closed.
  static bool reaped(int pidfd) noexcept {
    siginfo_t info{};
    for (;;) {
      if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &info, WEXITED | WNOHANG) == 0) break;
      if (errno == EINTR) continue;
      ::close(pidfd);  // ECHILD: someone else reaped it (waitpid(-1) elsewhere); nothing to wait for
      return true;
    }
    if (info.si_pid == 0) return false;
    ::close(pidfd);
    return true;
  }

  void start_thread() noexcept {
    std::call_once(thread_once_, [this] {
      try {
        std::thread([this] {
          for (;;) reap_ready(-1);
        }).detach();
        thread_started_ = true;
      } catch (const std::system_error&) {
        // No thread to be had: adopt() reaps at each hand-over instead.
      }
    });
  }

  // Reaps the children whose pidfds are readable, waiting up to `timeout_ms` for one.
  void reap_ready(int timeout_ms) noexcept {
    epoll_event events[64];
    int n = ::epoll_wait(epoll_, events, 64, timeout_ms);
    for (int i = 0; i < n; ++i) {
      int pidfd = events[i].data.fd;
      // Closing the pidfd takes it out of the epoll set; a spurious wake
      // re-arms it (EPOLLONESHOT keeps one thread per wake-up).
      (void)::epoll_ctl(epoll_, EPOLL_CTL_DEL, pidfd, nullptr);
      if (reaped(pidfd)) {
        pending_.fetch_sub(1, std::memory_order_relaxed);
      } else {
        epoll_event event{};
        event.events = EPOLLIN | EPOLLONESHOT;
        event.data.fd = pidfd;
        (void)::epoll_ctl(epoll_, EPOLL_CTL_ADD, pidfd, &event);
      }
    }
  }

  const int epoll_;
  std::once_flag thread_once_;
  bool thread_started_ = false;
  pollux::detail::Atomic<std::size_t> pending_{0};
  pollux::detail::Mutex mutex_;
  std::vector<int> unwatched_ POLLUX_GUARDED_BY(mutex_);  // orphans the epoll set could not take
};

}  // namespace

void reap_orphan(int pidfd) noexcept {
  if (pidfd >= 0) Reaper::instance().adopt(pidfd);
}

std::size_t orphans_pending() noexcept { return Reaper::instance().pending(); }

void reap_orphans_now() noexcept { Reaper::instance().reap_now(); }

}  // namespace pollux::process::detail
