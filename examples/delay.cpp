// The Delay future of tokio's "Async in depth", driven by block_on, and that
// chapter's loose end: a future polled by one task and then another must
// wake the waker of its most recent poll.
#include <pollux/pollux.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>

#include "delay.hpp"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {
// A named task stand-in: its waker records that it was woken.
struct Task : pollux::RefCounted<Task> {
  const char* name;
  std::atomic<bool> woken{false};
  explicit Task(const char* n) : name(n) {}
  void wake() { woken = true; }
};
}  // namespace

int main() {
  auto start = Clock::now();
  pollux::block_on(example::Delay(100ms));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  std::printf("block_on(Delay(100ms)) returned after %lld ms\n", static_cast<long long>(ms));

  // Poll once from task A, then move the Delay to task B and poll again,
  // as the chapter's poll_fn example does. Only B may be woken.
  auto a = pollux::make_arc<Task>("A");
  auto b = pollux::make_arc<Task>("B");
  pollux::Waker waker_a = pollux::waker_from(a);
  pollux::Waker waker_b = pollux::waker_from(b);
  example::Delay delay(50ms);
  pollux::Context cx_a(waker_a);
  pollux::Context cx_b(waker_b);
  bool first_pending = delay.poll(cx_a).is_pending();
  bool second_pending = delay.poll(cx_b).is_pending();
  while (!b->woken) std::this_thread::sleep_for(1ms);
  bool done = delay.poll(cx_b).is_ready();
  std::printf("polled by A (pending: %s), then by B (pending: %s); woken: A %s, B %s; ready: %s\n",
              first_pending ? "yes" : "no", second_pending ? "yes" : "no", a->woken ? "yes" : "no",
              b->woken ? "yes" : "no", done ? "yes" : "no");
  bool ok = ms >= 100 && first_pending && second_pending && !a->woken && b->woken && done;
  return ok ? 0 : 1;
}
