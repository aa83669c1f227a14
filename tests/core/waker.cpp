#include <doctest/doctest.h>

#include <thread>

#include "support.hpp"

using namespace pollux;

TEST_CASE("every clone of a waker is dropped exactly once") {
  test::Counts counts;
  {
    Waker a = test::counting_waker(counts);
    Waker b = a;             // clone
    Waker c(b);              // clone
    Waker d = std::move(c);  // a move is not a clone
    a = d;                   // same task: no clone, no drop
    CHECK(counts.clones == 2);
  }
  CHECK(counts.drops == 3);
  CHECK(counts.live() == 0);
}

TEST_CASE("wake consumes the waker and wake_by_ref keeps it") {
  test::Counts counts;
  Waker waker = test::counting_waker(counts);
  waker.wake_by_ref();
  waker.wake_by_ref();
  CHECK(counts.wakes_by_ref == 2);
  CHECK(counts.drops == 0);
  std::move(waker).wake();
  CHECK(counts.wakes == 1);
  CHECK(counts.drops == 1);
  waker.wake_by_ref();  // the no-op waker now: nothing happens
  CHECK(counts.woken() == 3);
}

TEST_CASE("will_wake is true for clones and false for other tasks") {
  test::Counts first, second;
  Waker a = test::counting_waker(first);
  Waker a2 = a;
  Waker b = test::counting_waker(second);
  CHECK(a.will_wake(a2));
  CHECK_FALSE(a.will_wake(b));
  CHECK_FALSE(a.will_wake(noop_waker()));
}

TEST_CASE("assigning a waker of another task drops the old one and clones the new one") {
  test::Counts first, second;
  Waker a = test::counting_waker(first);
  Waker b = test::counting_waker(second);
  a = b;
  CHECK(first.drops == 1);
  CHECK(second.clones == 1);
}

TEST_CASE("the noop waker and a default waker do nothing and wake the same nothing") {
  Waker waker;
  CHECK(waker.will_wake(noop_waker()));
  waker.wake_by_ref();
  Waker copy = noop_waker();
  std::move(copy).wake();
  CHECK(copy.will_wake(noop_waker()));
}

TEST_CASE("a WakerRef lends a raw waker without cloning or dropping it") {
  test::Counts counts;
  {
    WakerRef ref(RawWaker{&counts, &test::counting_vtable});
    const Waker& waker = ref;
    waker.wake_by_ref();
    Waker kept = waker;  // a child that stores it clones it
    CHECK(counts.clones == 1);
  }
  CHECK(counts.drops == 1);  // only the clone
  CHECK(counts.wakes_by_ref == 1);
}

TEST_CASE("wakers are cloned, woken and dropped from many threads with balanced counts") {
  test::Counts counts;
  Waker waker = test::counting_waker(counts);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&waker] {
      for (int i = 0; i < 1000; ++i) {
        Waker copy = waker;
        copy.wake_by_ref();
        std::move(copy).wake();
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(counts.clones == 4000);
  CHECK(counts.drops == 4000);
  CHECK(counts.woken() == 8000);
}
