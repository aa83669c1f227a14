// Signals: a Signal sees every delivery after it was made, from any
// thread, in any order relative to its polls; ctrl_c is the next SIGINT;
// signals nobody asked for keep their default action.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <thread>
#include <vector>

#include "support.hpp"

using namespace pollux;

namespace {
auto poll_next_once(signal::Signal& s) {
  Context cx(noop_waker());
  return s.poll_next(cx);
}
}  // namespace

// raise() delivers to the calling thread before it returns, so the handler
// has counted the delivery by the next line; kill() may deliver it to any
// thread, later. The sender threads raise() too: a process-directed kill()
// may pick a thread parked in a futex, where ThreadSanitizer (which runs
// handlers only at the calls it intercepts) holds it back until that thread
// wakes, which nothing else would do; a real process runs it at once.
TEST_CASE("a signal delivered before the first poll is the stream's first item") {
  auto s = signal::signal(SIGUSR1);
  ::raise(SIGUSR1);
  auto item = poll_next_once(s);
  REQUIRE(item.is_ready());
  CHECK(item.value() == std::optional<int>(SIGUSR1));
}

TEST_CASE("a signal delivered from another thread while the stream waits wakes it") {
  auto rt = Runtime::current_thread();
  auto s = signal::signal(SIGUSR1);
  std::thread sender([] { ::raise(SIGUSR1); });
  auto item = rt.block_on(next(s));
  sender.join();
  CHECK(item == std::optional<int>(SIGUSR1));
}

TEST_CASE("a signal delivered before a Signal was made is not one of its items") {
  test::Probe probe;  // outlives the Signals, which hold its waker
  auto first = signal::signal(SIGUSR2);
  ::raise(SIGUSR2);
  auto later = signal::signal(SIGUSR2);
  CHECK(later.poll_next(probe.cx).is_pending());
  CHECK(first.poll_next(probe.cx).is_ready());
}

// The handler counts a delivery at once, but the signal thread reads its
// byte whenever it next runs: here after `later` stored its waker.
TEST_CASE("a delivery a Signal counted when it was made does not wake it later") {
  test::Probe probe;
  ::raise(SIGUSR2);  // its byte waits in the pipe, or has been read already
  auto later = signal::signal(SIGUSR2);
  CHECK(later.poll_next(probe.cx).is_pending());

  // The pipe is read in order, so once a SIGUSR1 raised now has woken its
  // stream, the signal thread has handled SIGUSR2's byte too.
  auto marker = signal::signal(SIGUSR1);
  bool raised = false;
  auto rt = Runtime::current_thread();
  rt.block_on(poll_fn([&](Context& cx) -> Poll<void> {
    if (marker.poll_next(cx).is_ready()) return ready();
    if (!raised) {
      raised = true;
      ::raise(SIGUSR1);  // counted now, but only the thread's wake polls again
    }
    return pending;
  }));
  CHECK(probe.counts.woken() == 0);
}

TEST_CASE("every Signal of one signal sees each delivery") {
  auto rt = Runtime::current_thread();
  auto a = signal::signal(SIGUSR1);
  auto b = signal::signal(SIGUSR1);
  std::thread sender([] { ::raise(SIGUSR1); });
  auto both = rt.block_on(join(next(a), next(b)));
  sender.join();
  CHECK(std::get<0>(both) == std::optional<int>(SIGUSR1));
  CHECK(std::get<1>(both) == std::optional<int>(SIGUSR1));
}

TEST_CASE("deliveries that come before the stream is read merge into one item") {
  auto s = signal::signal(SIGUSR1);
  ::raise(SIGUSR1);
  ::raise(SIGUSR1);
  CHECK(poll_next_once(s).is_ready());
  CHECK(poll_next_once(s).is_pending());
}

TEST_CASE("ctrl_c is Ready at the next SIGINT") {
  auto rt = Runtime::current_thread();
  auto interrupted = signal::ctrl_c();
  std::thread sender([] { ::raise(SIGINT); });
  rt.block_on(std::move(interrupted));
  sender.join();
}

TEST_CASE("cancel_on cancels its token from a task when the signal comes, and each waiter wakes") {
  auto rt = Runtime::multi_thread(2);
  CancellationToken shutdown;
  auto cancelling = rt.spawn(signal::cancel_on(SIGUSR2, shutdown));
  auto waiter = rt.spawn(shutdown.child_token().cancelled());
  std::thread sender([] { ::raise(SIGUSR2); });
  CHECK(rt.block_on(std::move(waiter)));
  CHECK(rt.block_on(std::move(cancelling)));
  sender.join();
  CHECK(shutdown.is_cancelled());
}

TEST_CASE("signals under load: a flood of deliveries while tasks wait on the token cancels it once, with no deadlock") {
  auto rt = Runtime::multi_thread(2);
  CancellationToken shutdown;
  auto cancelling = rt.spawn(signal::cancel_on(SIGUSR2, shutdown));
  std::vector<JoinHandle<void>> waiters;
  for (int i = 0; i < 100; ++i) waiters.push_back(rt.spawn(shutdown.child_token().cancelled()));
  std::thread sender([] {
    for (int i = 0; i < 1000; ++i) ::raise(SIGUSR2);
  });
  for (auto& w : waiters) CHECK(rt.block_on(std::move(w)));
  CHECK(rt.block_on(std::move(cancelling)));
  sender.join();
  CHECK(shutdown.is_cancelled());
}

TEST_CASE("a destroyed Signal leaves no waker behind") {
  test::Probe probe;
  {
    auto s = signal::signal(SIGUSR1);
    CHECK(s.poll_next(probe.cx).is_pending());
    CHECK(probe.counts.live() == 2);
  }
  CHECK(probe.counts.live() == 1);
}

TEST_CASE("a signal nobody asked for keeps its default action") {
  auto asked = signal::signal(SIGUSR1);  // asking for one signal changes no other
  pid_t child = ::fork();                // the child inherits the handlers
  REQUIRE(child >= 0);
  if (child == 0) {
    ::raise(SIGALRM);
    ::_exit(0);  // not reached: SIGALRM terminates
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGALRM);
}

TEST_CASE("signals that cannot or must not be caught are a clear error") {
  CHECK_THROWS_AS((void)signal::signal(SIGKILL), std::invalid_argument);
  CHECK_THROWS_AS((void)signal::signal(SIGSEGV), std::invalid_argument);
  CHECK_THROWS_AS((void)signal::signal(0), std::invalid_argument);
  CHECK_THROWS_AS((void)signal::signal(1000), std::invalid_argument);
}
