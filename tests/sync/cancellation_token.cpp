// CancellationToken (tokio-util's): the flag every copy sees, cancelled()
// futures in every order against the cancel, the tree of child tokens
// (also once tokens in the middle are gone), the drop guard, and cancels,
// child tokens and drops racing on many threads.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;
using test::Probe;

TEST_CASE("a new token is not cancelled, and every copy sees a cancel") {
  CancellationToken token;
  CancellationToken copy = token;
  CHECK_FALSE(token.is_cancelled());
  copy.cancel();
  CHECK(token.is_cancelled());
  CHECK(copy.is_cancelled());
  token.cancel();  // again: nothing more happens
  CHECK(token.is_cancelled());
}

TEST_CASE("cancelled() of a cancelled token is Ready on its first poll") {
  CancellationToken token;
  token.cancel();
  auto waiting = token.cancelled();
  CHECK(test::poll_once(waiting).is_ready());
}

TEST_CASE("cancelled() polled before the cancel is woken by it and completes") {
  CancellationToken token;
  Probe probe;
  auto waiting = token.cancelled();
  CHECK(waiting.poll(probe.cx).is_pending());
  CHECK(probe.counts.woken() == 0);
  token.cancel();
  CHECK(probe.counts.woken() == 1);
  CHECK(waiting.poll(probe.cx).is_ready());
  CHECK(probe.counts.live() == 1);  // no waker of it left in the token
}

TEST_CASE("cancelled() made before the cancel but first polled after it completes") {
  CancellationToken token;
  auto waiting = token.cancelled();
  token.cancel();
  CHECK(test::poll_once(waiting).is_ready());
}

TEST_CASE("a cancelled() destroyed while it waits leaves no waker, and the cancel wakes nobody") {
  CancellationToken token;
  Probe probe;
  {
    auto waiting = token.cancelled();
    CHECK(waiting.poll(probe.cx).is_pending());
  }
  CHECK(probe.counts.live() == 1);
  token.cancel();
  CHECK(probe.counts.woken() == 0);
}

TEST_CASE("a parent's cancel reaches its children and theirs, and wakes their waiters") {
  CancellationToken root;
  CancellationToken child = root.child_token();
  CancellationToken grandchild = child.child_token();
  Probe probe;
  auto waiting = grandchild.cancelled();
  CHECK(waiting.poll(probe.cx).is_pending());
  root.cancel();
  CHECK(child.is_cancelled());
  CHECK(grandchild.is_cancelled());
  CHECK(probe.counts.woken() == 1);
  CHECK(waiting.poll(probe.cx).is_ready());
}

TEST_CASE("a child's cancel reaches neither its parent nor its siblings") {
  CancellationToken root;
  CancellationToken first = root.child_token();
  CancellationToken second = root.child_token();
  first.cancel();
  CHECK_FALSE(root.is_cancelled());
  CHECK_FALSE(second.is_cancelled());
  root.cancel();
  CHECK(second.is_cancelled());
}

TEST_CASE("a child of a cancelled token starts cancelled") {
  CancellationToken root;
  root.cancel();
  CHECK(root.child_token().is_cancelled());
  CancellationToken child = root.child_token();
  auto waiting = child.cancelled();
  CHECK(test::poll_once(waiting).is_ready());
}

TEST_CASE("a grandchild is still reached once every copy of its parent token is gone") {
  CancellationToken root;
  std::optional<CancellationToken> middle = root.child_token();
  CancellationToken grandchild = middle->child_token();
  middle.reset();  // the grandchild hangs from the root now
  root.cancel();
  CHECK(grandchild.is_cancelled());
}

TEST_CASE("a child outlives its parent and can still be cancelled on its own") {
  std::optional<CancellationToken> root{CancellationToken()};
  CancellationToken child = root->child_token();
  root.reset();
  CHECK_FALSE(child.is_cancelled());
  child.cancel();
  CHECK(child.is_cancelled());
}

TEST_CASE("a drop guard cancels its token when it goes, and a disarmed one does not") {
  CancellationToken token;
  { auto guard = token.drop_guard(); }
  CHECK(token.is_cancelled());
  CancellationToken other;
  {
    auto guard = other.drop_guard();
    CancellationToken back = guard.disarm();
    CHECK_FALSE(back.is_cancelled());
  }
  CHECK_FALSE(other.is_cancelled());
}

TEST_CASE("a moved-from token is a clear error") {
  CancellationToken token;
  CancellationToken moved = std::move(token);
  CHECK_THROWS_AS(token.cancel(), std::logic_error);                         // NOLINT: use after move on purpose
  CHECK_THROWS_WITH(token.is_cancelled(), doctest::Contains("moved-from"));  // NOLINT
  CHECK_FALSE(moved.is_cancelled());
}

TEST_CASE("a cancel from another thread wakes every task waiting on the token or its children") {
  auto rt = Runtime::multi_thread(2);
  CancellationToken root;
  std::vector<JoinHandle<void>> waiting;
  for (int i = 0; i < 100; ++i) {
    CancellationToken token = i % 2 == 0 ? root : root.child_token();
    waiting.push_back(rt.spawn(token.cancelled()));  // the future holds a copy of the token
  }
  rt.block_on(sleep(5ms));
  std::thread canceller([root] { root.cancel(); });
  for (auto& handle : waiting) CHECK(rt.block_on(std::move(handle)).has_value());
  canceller.join();
}

TEST_CASE("child tokens made, dropped and cancelled on many threads at once all end cancelled") {
  for (int round = 0; round < 50; ++round) {
    CancellationToken root;
    std::vector<std::thread> threads;
    std::vector<CancellationToken> kept[4];
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        CancellationToken mine = root.child_token();
        for (int i = 0; i < 50; ++i) {
          CancellationToken child = mine.child_token();
          CancellationToken grandchild = child.child_token();
          if (i % 3 == 0) kept[t].push_back(grandchild);
          if (i % 7 == 0) child.cancel();
          if (t == 0 && i == 25) root.cancel();
        }
        kept[t].push_back(mine);
      });
    }
    for (auto& thread : threads) thread.join();
    root.cancel();
    for (auto& list : kept) {
      for (auto& token : list) CHECK(token.is_cancelled());
    }
  }
}

TEST_CASE("a chain of a million child tokens is cancelled from its root without recursion") {
  CancellationToken root;
  std::vector<CancellationToken> chain;
  chain.reserve(1'000'000);
  chain.push_back(root.child_token());
  for (int i = 1; i < 1'000'000; ++i) chain.push_back(chain.back().child_token());
  root.cancel();
  CHECK(chain.front().is_cancelled());
  CHECK(chain.back().is_cancelled());
  chain.clear();  // and their last copies go, deepest last, without recursion either
}
