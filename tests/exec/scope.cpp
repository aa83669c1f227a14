// pollux::scope: children that borrow from the frame that owns the scope,
// run in parallel, end before the scope does, and are destroyed with it,
// even while a worker is in the middle of polling one of them.
#include <doctest/doctest.h>

#include <array>
#include <functional>
#include <optional>
#include <vector>
#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

#include "death.hpp"
#include "support.hpp"

using namespace pollux;
using namespace test;
using test::Death;
using test::run_in_child;

namespace {

// A child that writes `value` into a slot it borrows.
auto write_into(int& slot, int value) {
  return lazy([&slot, value] { slot = value; });
}

// A child that waits on a Control (test::ManualFuture) and then writes its value.
auto wait_then_write(std::shared_ptr<Control> control, int& slot) {
  return map(ManualFuture(std::move(control)), [&slot](int v) { slot = v; });
}

// A child that never ends and counts its destruction.
auto forever(std::atomic<int>* drops) {
  return map(PendingWithAtomicDrop(drops), [](int) {});
}

// Ready after `left` polls, waking itself in between: a random point in
// the run of the futures beside it.
struct YieldTimes {
  using Output = void;
  int left;
  Poll<void> poll(Context& cx) {
    if (left-- <= 0) return ready();
    cx.waker().wake_by_ref();
    return pending;
  }
};

// How many scopes the storm below destroys, 1,000 children each: 100,000
// in the plain build (about 20 s here). The sanitizers make each child 10
// (AddressSanitizer) to 20 times (ThreadSanitizer) dearer, so they destroy
// 10,000 and 2,000 scopes: every path the same, at a size the test budget holds.
#if defined(__SANITIZE_THREAD__)
constexpr int kStormScopes = 2000;
#elif defined(__SANITIZE_ADDRESS__)
constexpr int kStormScopes = 10000;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr int kStormScopes = 2000;
#elif __has_feature(address_sanitizer)
constexpr int kStormScopes = 10000;
#else
constexpr int kStormScopes = 100000;
#endif
#else
constexpr int kStormScopes = 100000;
#endif

// A scope whose body never ends, as a nameable type.
using BodyFn = std::function<PendingFuture<int>(Scope&)>;
using PendingScope = ScopeFuture<BodyFn>;

}  // namespace

TEST_CASE("children borrow a stack array and write into it on two workers") {
  ThreadPool pool(2);
  std::array<int, 1000> squares{};
  pool.block_on(pollux::scope([&](Scope& scope) {
    for (int i = 0; i < 1000; ++i) CHECK(scope.spawn(write_into(squares[i], i * i)));
    return ready_future();
  }));
  for (int i = 0; i < 1000; ++i) REQUIRE(squares[i] == i * i);
}

TEST_CASE("a scope completes with its body's output only once every child has ended") {
  LocalExecutor ex;
  auto control = std::make_shared<Control>();
  int slot = 0;
  std::optional<int> out;
  auto outer = ex.spawn(map(pollux::scope([&](Scope& scope) {
                              scope.spawn(wait_then_write(control, slot));
                              return ready_future(7);
                            }),
                            [&](int v) { out = v; }));
  ex.block_on(yield_now());
  ex.block_on(yield_now());
  CHECK_FALSE(out.has_value());  // the body is done, the child is not
  CHECK(control->polls == 1);
  control->complete(5);
  CHECK(ex.block_on(std::move(outer)).has_value());
  CHECK(out == 7);
  CHECK(slot == 5);
}

TEST_CASE("the first child that throws cancels its siblings by destruction and comes out of the scope") {
  LocalExecutor ex;
  std::atomic<int> drops{0};
  bool caught = false;
  try {
    ex.block_on(pollux::scope([&](Scope& scope) {
      for (int i = 0; i < 3; ++i) scope.spawn(forever(&drops));
      scope.spawn(lazy([] { throw std::runtime_error("child failed"); }));
      return ready_future();
    }));
  } catch (const std::runtime_error& e) {
    caught = std::string(e.what()) == "child failed";
  }
  CHECK(caught);
  CHECK(drops.load() == 3);
}

TEST_CASE("a failed scope completes only after a sibling in a poll on another worker has ended") {
  ThreadPool pool(2);
  std::atomic<bool> in_poll{false}, release{false}, threw{false};
  std::atomic<int> drops{0};
  struct Blocking {
    using Output = void;
    std::atomic<bool>* in_poll;
    std::atomic<bool>* release;
    BasicDropCounter<std::atomic<int>> counter;
    Poll<void> poll(Context&) {
      in_poll->store(true);
      in_poll->notify_all();
      while (!release->load()) release->wait(false);
      return pending;  // keeps no waker: only its cancellation ends it
    }
  };
  // Lets the blocked sibling go well after the failure, so that a scope
  // that completed on the failure alone would be seen doing so.
  std::thread releaser([&] {
    while (!threw.load()) threw.wait(false);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    release.store(true);
    release.notify_all();
  });
  using Body = std::function<ReadyFuture<void>(Scope&)>;
  std::optional<ScopeFuture<Body>> scope;
  bool released_when_done = false;
  int dropped_when_done = -1;
  pool.block_on(poll_fn<void>([&](Context& cx) -> Poll<void> {
    if (!scope) {
      scope.emplace(Body([&](Scope& s) {
        s.spawn(Blocking{&in_poll, &release, BasicDropCounter<std::atomic<int>>(&drops)});
        s.spawn(lazy([&] {
          while (!in_poll.load()) in_poll.wait(false);
          threw.store(true);
          threw.notify_all();
          throw std::runtime_error("child failed");
        }));
        return ready_future();
      }));
    }
    try {
      if (scope->poll(cx).is_pending()) return pending;
    } catch (const std::runtime_error&) {
      // Seen while the scope's future still exists: its children are gone.
      released_when_done = release.load();
      dropped_when_done = drops.load();
    }
    return ready();
  }));
  releaser.join();
  CHECK(released_when_done);      // it waited for the blocked sibling's poll
  CHECK(dropped_when_done == 1);  // and that sibling was destroyed
}

TEST_CASE("a child's failure destroys the scope's body while it waits") {
  LocalExecutor ex;
  int body_drops = 0;
  CHECK_THROWS_AS(ex.block_on(pollux::scope([&](Scope& scope) {
    scope.spawn(lazy([] { throw std::logic_error("child failed"); }));
    return PendingWithDrop(&body_drops);  // the body never ends by itself
  })),
                  std::logic_error);
  CHECK(body_drops == 1);
}

TEST_CASE("the body's exception cancels the children and is rethrown once they are gone") {
  LocalExecutor ex;
  std::atomic<int> drops{0};
  CHECK_THROWS_AS(ex.block_on(pollux::scope([&](Scope& scope) {
    scope.spawn(forever(&drops));
    return lazy([]() -> int { throw std::runtime_error("body failed"); });
  })),
                  std::runtime_error);
  CHECK(drops.load() == 1);
}

TEST_CASE("destroying a scope's future destroys every child before it returns") {
  LocalExecutor ex;
  std::atomic<int> drops{0};
  std::optional<PendingScope> scope;
  ex.block_on(poll_fn<void>([&, step = 0](Context& cx) mutable -> Poll<void> {
    if (step++ == 0) {
      scope.emplace(BodyFn([&](Scope& s) {
        for (int i = 0; i < 100; ++i) s.spawn(forever(&drops));
        return pending_future<int>();
      }));
      CHECK(scope->poll(cx).is_pending());
      cx.waker().wake_by_ref();
      return pending;
    }
    CHECK(drops.load() == 0);
    scope.reset();
    CHECK(drops.load() == 100);
    return ready();
  }));
}

TEST_CASE("a scope destroyed while a worker polls one of its children returns only after that poll") {
  ThreadPool pool(2);
  std::atomic<bool> in_poll{false}, release{false}, poll_ended{false};
  struct Blocking {
    using Output = void;
    std::atomic<bool>* in_poll;
    std::atomic<bool>* release;
    std::atomic<bool>* poll_ended;
    Poll<void> poll(Context&) {
      in_poll->store(true);
      while (!release->load()) release->wait(false);
      poll_ended->store(true);
      return pending;  // no waker kept: only the scope ends it
    }
  };
  bool ended_before_return = false;
  std::optional<PendingScope> scope;
  pool.block_on(poll_fn<void>([&, started = false](Context& cx) mutable -> Poll<void> {
    if (!started) {
      started = true;
      scope.emplace(BodyFn([&](Scope& s) {
        s.spawn(Blocking{&in_poll, &release, &poll_ended});
        return pending_future<int>();
      }));
      CHECK(scope->poll(cx).is_pending());
    }
    if (!in_poll.load()) {  // the child's worker has not started its poll yet
      cx.waker().wake_by_ref();
      return pending;
    }
    std::thread releaser([&] {
      release.store(true);
      release.notify_all();
    });
    scope.reset();  // waits for the poll in flight, whenever the releaser lets it end
    ended_before_return = poll_ended.load();
    releaser.join();
    return ready();
  }));
  CHECK(ended_before_return);
}

TEST_CASE("a child spawned after close is refused and destroyed unpolled") {
  LocalExecutor ex;
  int drops = 0;
  bool accepted = true;
  ex.block_on(pollux::scope([&](Scope& scope) {
    scope.close();
    CHECK(scope.is_closed());
    accepted = scope.spawn(map(PendingWithDrop(&drops), [](int) {}));
    return ready_future();
  }));
  CHECK_FALSE(accepted);
  CHECK(drops == 1);
}

TEST_CASE("request_stop cancels the token the children watch, and the scope completes normally") {
  ThreadPool pool(2);
  std::atomic<int> stopped{0};
  pool.block_on(pollux::scope([&](Scope& scope) {
    for (int i = 0; i < 4; ++i) {
      scope.spawn(map(scope.token().cancelled(), [&](auto&&...) { stopped.fetch_add(1); }));
    }
    scope.request_stop();
    CHECK(scope.stop_requested());
    CHECK_FALSE(scope.spawn(ready_future()));
    return ready_future();
  }));
  CHECK(stopped.load() == 4);
}

TEST_CASE("cancel destroys every child and the scope completes normally") {
  LocalExecutor ex;
  std::atomic<int> drops{0};
  int out = ex.block_on(pollux::scope([&](Scope& scope) {
    for (int i = 0; i < 10; ++i) scope.spawn(forever(&drops));
    CHECK(scope.size() == 10);
    scope.cancel();
    CHECK(scope.size() == 0);
    return ready_future(3);
  }));
  CHECK(out == 3);
  CHECK(drops.load() == 10);
}

TEST_CASE("children spawn siblings through the scope they borrow") {
  ThreadPool pool(2);
  std::array<int, 64> cells{};
  struct Splitter {
    using Output = void;
    Scope* scope;
    int* cells;
    int lo, hi;
    Poll<void> poll(Context&) {
      if (hi - lo == 1) {
        cells[lo] = lo + 1;
        return ready();
      }
      int mid = (lo + hi) / 2;
      scope->spawn(Splitter{scope, cells, lo, mid});
      scope->spawn(Splitter{scope, cells, mid, hi});
      return ready();
    }
  };
  pool.block_on(pollux::scope([&](Scope& scope) {
    scope.spawn(Splitter{&scope, cells.data(), 0, 64});
    return ready_future();
  }));
  for (int i = 0; i < 64; ++i) REQUIRE(cells[i] == i + 1);
}

TEST_CASE("a child cannot outlive its scope: one that ignores every stop is destroyed with it, never polled again") {
  ThreadPool pool(2);
  auto borrowed = std::make_unique<int[]>(8);  // one slot per child
  std::atomic<int> polls_after{0};
  std::atomic<bool> scope_gone{false};
  struct Stubborn {
    using Output = void;
    int* borrowed;
    std::atomic<int>* polls_after;
    std::atomic<bool>* scope_gone;
    Poll<void> poll(Context& cx) {
      if (scope_gone->load()) polls_after->fetch_add(1);
      ++*borrowed;  // under ASan, a poll after the scope would touch freed memory
      cx.waker().wake_by_ref();
      return pending;
    }
  };
  pool.block_on(map(select(pollux::scope([&](Scope& scope) {
                             for (int i = 0; i < 8; ++i) scope.spawn(Stubborn{&borrowed[i], &polls_after, &scope_gone});
                             return pending_future<int>();
                           }),
                           yield_now()),
                    [](auto&&) {}));
  scope_gone = true;  // select dropped the scope: its children are gone too
  borrowed.reset();
  pool.block_on(yield_now());
  CHECK(polls_after.load() == 0);
}

TEST_CASE("spawning into a scope from a task that is neither its owner nor its child stops the program") {
  if (!detail::check_contract) return;
  Death death = run_in_child([] {
    LocalExecutor ex;
    Scope* leaked = nullptr;
    auto owner = ex.spawn(pollux::scope([&](Scope& scope) {
      leaked = &scope;
      return pending_future<int>();
    }));
    ex.block_on(yield_now());
    ex.block_on(lazy([&] { leaked->spawn(ready_future()); }));
  });
  CHECK(death.aborted);
  CHECK(death.stderr_text.find("neither the scope's owner nor one of its children") != std::string::npos);
}

TEST_CASE("destroying a scope from inside one of its own children stops the program with a message") {
  if (!detail::check_contract) return;
  Death death = run_in_child([] {
    LocalExecutor ex;
    std::optional<ScopeFuture<std::function<PendingFuture<int>(Scope&)>>> scope;
    ex.block_on(poll_fn<void>([&](Context& cx) -> Poll<void> {
      scope.emplace(std::function<PendingFuture<int>(Scope&)>([&](Scope& s) {
        s.spawn(lazy([&] { scope.reset(); }));
        return pending_future<int>();
      }));
      (void)scope->poll(cx);
      return ready();
    }));
    ex.block_on(yield_now());
  });
  CHECK(death.aborted);
  CHECK(death.stderr_text.find("from inside one of its own children") != std::string::npos);
}

TEST_CASE("scopes destroyed at random points with many children leave no child and no leak") {
  // Counts the child futures in existence: moves do not count twice.
  struct Alive {
    std::atomic<int>* count;
    explicit Alive(std::atomic<int>* c) : count(c) { count->fetch_add(1); }
    Alive(Alive&& other) noexcept : count(std::exchange(other.count, nullptr)) {}
    Alive& operator=(Alive&&) = delete;
    ~Alive() {
      if (count != nullptr) count->fetch_sub(1);
    }
  };
  ThreadPool pool(2);
  std::mt19937 rng(12345);
  constexpr int kScopes = kStormScopes;
  constexpr int kChildren = 1000;
  std::atomic<int> alive{0};
  std::size_t spawned = 0;
  for (int round = 0; round < kScopes; ++round) {
    int stop_after = std::uniform_int_distribution<int>(0, 8)(rng);
    std::vector<int> borrowed(kChildren, 0);  // freed after each round: ASan sees a child that outlived it
    pool.block_on(map(select(pollux::scope([&](Scope& scope) {
                               for (int i = 0; i < kChildren; ++i) {
                                 int turns = i % 4;
                                 spawned += scope.spawn(poll_fn<void>(
                                     [&borrowed, i, turns, alive = Alive(&alive)](Context& cx) -> Poll<void> {
                                       if (++borrowed[i] > turns) return ready();
                                       cx.waker().wake_by_ref();
                                       return pending;
                                     }));
                               }
                               return pending_future<int>();
                             }),
                             YieldTimes{stop_after}),
                      [](auto&&) {}));
    REQUIRE(alive.load() == 0);  // the scope is gone, and every child's future with it
  }
  CHECK(spawned > 0);
  // Each child's task ends too: the shells of destroyed children were woken
  // and finish on the workers, as soon as those get to them (at most 10 s
  // on a loaded machine).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pool.live_tasks() != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(pool.live_tasks() == 0);
}
