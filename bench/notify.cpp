// notify [ping_pong|waiters|ping_pong_mt] [N=3e6]
// ping_pong: tasks A and B, Notify na and nb; A does N times { nb.notify_one();
// await na.notified() }, B does N times { await nb.notified(); na.notify_one() }.
// ns per round trip. waiters: 100 waiter tasks, Notify go and ready and a
// shared counter; rounds = N/100. Per round each waiter creates
// go.notified() (which counts from its creation for notify_waiters, as
// tokio's enable()), increments the counter, and the one that brings it to
// 100 resets it and calls ready.notify_one(); then it awaits go. A notifier
// awaits ready.notified() and calls go.notify_waiters(). ns per wake-up.
#include <memory>

#include "tasks.hpp"

using namespace pollux;

namespace {

constexpr std::uint64_t kWaiters = 100;

struct Shared {
  Notify a, b, go, ready;
  std::atomic<std::uint64_t> armed{0};
};

// A: notify b, await a, n times.
auto ping(std::shared_ptr<Shared> s, std::uint64_t n) {
  return poll_fn<std::uint64_t>([s, n, i = std::uint64_t{0},
                                 wait = std::optional<Notify::Notified>()](Context& cx) mutable -> Poll<std::uint64_t> {
    for (;;) {
      if (!wait) {
        if (i == n) return ready(i);
        s->b.notify_one();
        wait.emplace(s->a.notified());
      }
      if (wait->poll(cx).is_pending()) return pending;
      wait.reset();
      ++i;
    }
  });
}

// B: await b, notify a, n times.
auto pong(std::shared_ptr<Shared> s, std::uint64_t n) {
  return poll_fn<std::uint64_t>([s, n, i = std::uint64_t{0},
                                 wait = std::optional<Notify::Notified>()](Context& cx) mutable -> Poll<std::uint64_t> {
    for (;;) {
      if (!wait) {
        if (i == n) return ready(i);
        wait.emplace(s->b.notified());
      }
      if (wait->poll(cx).is_pending()) return pending;
      wait.reset();
      s->a.notify_one();
      ++i;
    }
  });
}

auto waiter(std::shared_ptr<Shared> s, std::uint64_t rounds) {
  return poll_fn<std::uint64_t>([s, rounds, i = std::uint64_t{0},
                                 wait = std::optional<Notify::Notified>()](Context& cx) mutable -> Poll<std::uint64_t> {
    for (;;) {
      if (!wait) {
        if (i == rounds) return ready(i);
        wait.emplace(s->go.notified());
        if (s->armed.fetch_add(1, std::memory_order_acq_rel) + 1 == kWaiters) {
          s->armed.store(0, std::memory_order_release);
          s->ready.notify_one();
        }
      }
      if (wait->poll(cx).is_pending()) return pending;
      wait.reset();
      ++i;
    }
  });
}

auto notifier(std::shared_ptr<Shared> s, std::uint64_t rounds) {
  return poll_fn<std::uint64_t>([s, rounds, i = std::uint64_t{0},
                                 wait = std::optional<Notify::Notified>()](Context& cx) mutable -> Poll<std::uint64_t> {
    for (;;) {
      if (!wait) {
        if (i == rounds) return ready(std::uint64_t{0});
        wait.emplace(s->ready.notified());
      }
      if (wait->poll(cx).is_pending()) return pending;
      wait.reset();
      s->go.notify_waiters();
      ++i;
    }
  });
}

auto run(bool waiters, std::uint64_t n) {
  return bench::spawn_and_join<std::uint64_t>([=] {
    auto s = std::make_shared<Shared>();
    std::vector<JoinHandle<std::uint64_t>> handles;
    if (waiters) {
      std::uint64_t rounds = n / kWaiters;
      for (std::uint64_t k = 0; k < kWaiters; ++k) handles.push_back(spawn(waiter(s, rounds)));
      handles.insert(handles.begin(), spawn(notifier(s, rounds)));
    } else {
      handles.push_back(spawn(pong(s, n)));
      handles.push_back(spawn(ping(s, n)));
      std::swap(handles[0], handles[1]);  // await A, then B
    }
    return handles;
  });
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "ping_pong");
  std::uint64_t n = args.num(1, 3'000'000);
  if (variant != "ping_pong" && variant != "waiters" && variant != "ping_pong_mt") {
    bench::die("unknown variant '" + variant + "' (ping_pong|waiters|ping_pong_mt)");
  }
  bool waiters = variant == "waiters";
  Runtime rt = bench::runtime_for(variant);
  auto result = bench::timed(
      rt, n, [&](std::uint64_t m) { return run(waiters, m); },
      [waiters](std::vector<std::uint64_t> counts, std::uint64_t m) {
        std::uint64_t total = 0;
        for (auto c : counts) total += c;
        std::uint64_t expected = waiters ? (m / kWaiters) * kWaiters : 2 * m;
        if (total != expected) bench::die("wrong count");
      });
  std::uint64_t ops = waiters ? (n / kWaiters) * kWaiters : n;
  std::vector<std::pair<const char*, double>> extra{{"allocations", double(result.allocations)}};
  if (waiters) extra.insert(extra.begin(), {"k", double(kWaiters)});
  bench::emit("notify", variant, ops, result.seconds, extra);
}
