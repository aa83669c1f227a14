// The process's signal registry: the handler, the pipe it writes to, and
// the thread that reads the pipe and wakes the Signals waiting.
#include "pollux/runtime/signal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/waker.hpp"

namespace pollux::signal {

namespace detail {

// One Signal's place in the registry: the deliveries it has seen, and the
// waker of its last Pending poll. Guarded by the registry's mutex.
struct Listener {
  int signo;
  std::uint64_t seen;
  std::optional<Waker> waker;
};

}  // namespace detail

namespace {

constexpr int kMaxSignal = 64;

// Deliveries per signal, counted by the handler. A lock-free atomic is
// async-signal-safe; they live outside the registry so the handler
// touches nothing that is ever destroyed.
std::array<pollux::detail::Atomic<std::uint64_t>, kMaxSignal + 1> deliveries{};
pollux::detail::Atomic<int> pipe_write_fd{-1};

extern "C" void on_signal(int signo) {
  int saved = errno;  // the interrupted code may be about to read errno
  deliveries[signo].fetch_add(1, std::memory_order_release);
  unsigned char byte = static_cast<unsigned char>(signo);
  // Non-blocking: a full pipe already tells the thread to look.
  [[maybe_unused]] ssize_t n = ::write(pipe_write_fd.load(std::memory_order_relaxed), &byte, 1);
  errno = saved;
}

class Registry {
 public:
  static Registry& instance() {
    static Registry registry;
    return registry;
  }

  // Registers a listener for `signo`, installing the handler and starting
  // the thread the first time.
  void add(detail::Listener* listener) {
    pollux::detail::MutexLock lock(mutex_);
    start_locked();
    int signo = listener->signo;
    if (!installed_[signo]) {
      struct sigaction action {};
      action.sa_handler = on_signal;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESTART;
      if (::sigaction(signo, &action, nullptr) < 0) {
        throw std::system_error(errno, std::generic_category(), "pollux::signal: sigaction " + std::to_string(signo));
      }
      installed_[signo] = true;
    }
    listener->seen = deliveries[signo].load(std::memory_order_acquire);
    listeners_.push_back(listener);
  }

  void remove(detail::Listener* listener) noexcept {
    std::optional<Waker> waker;  // dropped outside the lock
    pollux::detail::MutexLock lock(mutex_);
    std::erase(listeners_, listener);
    waker = std::move(listener->waker);
  }

  // True (and the listener up to date) if its signal came since it last
  // looked; else stores the waker.
  bool poll(detail::Listener* listener, const Waker& waker) {
    pollux::detail::MutexLock lock(mutex_);
    std::uint64_t now = deliveries[listener->signo].load(std::memory_order_acquire);
    if (now != listener->seen) {
      listener->seen = now;
      return true;
    }
    if (listener->waker)
      *listener->waker = waker;
    else
      listener->waker.emplace(waker);
    return false;
  }

  ~Registry() {
    std::thread thread;
    {
      pollux::detail::MutexLock lock(mutex_);
      thread = std::move(thread_);
    }
    if (thread.joinable()) {
      unsigned char stop = 0;
      [[maybe_unused]] ssize_t n = ::write(write_fd_, &stop, 1);
      thread.join();
    }
    // The handlers stay installed and may still run: they keep writing to
    // the pipe's write end, which stays open (and is closed by the exit).
    if (read_fd_ >= 0) ::close(read_fd_);
  }

 private:
  void start_locked() {
    if (thread_.joinable()) return;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) < 0) throw std::system_error(errno, std::generic_category(), "pollux::signal: pipe");
    ::fcntl(fds[1], F_SETFL, O_NONBLOCK);  // the handler must never block
    read_fd_ = fds[0];
    write_fd_ = fds[1];
    pipe_write_fd.store(write_fd_, std::memory_order_relaxed);
    thread_ = std::thread([this] { run(); });
  }

  // Blocks on the pipe; each byte names a signal (0: stop).
  void run() {
    unsigned char bytes[64];
    for (;;) {
      ssize_t n = ::read(read_fd_, bytes, sizeof bytes);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      std::array<bool, kMaxSignal + 1> came{};
      for (ssize_t i = 0; i < n; ++i) {
        if (bytes[i] == 0) return;
        came[bytes[i]] = true;
      }
      wake(came);
    }
  }

  // Wakes the listeners of the signals that came, outside the lock. Only
  // a listener with a delivery it has not seen is woken: a byte may be read
  // long after its delivery, when a Signal made since has already counted
  // it, and waking that Signal would be spurious (and would reach a waker
  // its owner may have dropped by then).
  void wake(const std::array<bool, kMaxSignal + 1>& came) {
    std::vector<Waker> to_wake;
    {
      pollux::detail::MutexLock lock(mutex_);
      for (detail::Listener* listener : listeners_) {
        int signo = listener->signo;
        if (!came[signo] || !listener->waker) continue;
        if (deliveries[signo].load(std::memory_order_acquire) == listener->seen) continue;
        to_wake.push_back(std::move(*listener->waker));
        listener->waker.reset();
      }
    }
    for (Waker& waker : to_wake) std::move(waker).wake();
  }

  pollux::detail::Mutex mutex_;
  std::vector<detail::Listener*> listeners_ POLLUX_GUARDED_BY(mutex_);
  std::array<bool, kMaxSignal + 1> installed_ POLLUX_GUARDED_BY(mutex_){};
  int read_fd_ = -1;
  int write_fd_ = -1;
  std::thread thread_;
};

void check(int signo) {
  if (signo <= 0 || signo > kMaxSignal) {
    throw std::invalid_argument("pollux::signal: " + std::to_string(signo) + " is not a signal number");
  }
  if (signo == SIGKILL || signo == SIGSTOP) {
    throw std::invalid_argument("pollux::signal: signal " + std::to_string(signo) + " cannot be caught");
  }
  if (signo == SIGSEGV || signo == SIGBUS || signo == SIGILL || signo == SIGFPE) {
    throw std::invalid_argument("pollux::signal: signal " + std::to_string(signo)
                                + " reports a fault in the program and must keep its default action");
  }
}

}  // namespace

Signal::Signal(int signo) : signo_(signo) {
  check(signo);
  listener_ = std::make_unique<detail::Listener>(detail::Listener{signo, 0, std::nullopt});
  Registry::instance().add(listener_.get());
}

Signal::Signal(Signal&&) noexcept = default;

Signal& Signal::operator=(Signal&& other) noexcept {
  if (this != &other) {
    if (listener_) Registry::instance().remove(listener_.get());
    signo_ = other.signo_;
    listener_ = std::move(other.listener_);
  }
  return *this;
}

Signal::~Signal() {
  if (listener_) Registry::instance().remove(listener_.get());
}

Poll<std::optional<int>> Signal::poll_next(Context& cx) {
  if (Registry::instance().poll(listener_.get(), cx.waker())) return ready(signo_);
  return pending;
}

}  // namespace pollux::signal
