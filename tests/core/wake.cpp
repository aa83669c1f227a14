#include <doctest/doctest.h>

#include <atomic>

#include "support.hpp"

using namespace pollux;

namespace {
struct Flag : RefCounted<Flag> {
  std::atomic<int> wakes{0};
  std::atomic<bool>* destroyed;
  explicit Flag(std::atomic<bool>* d) : destroyed(d) {}
  ~Flag() { *destroyed = true; }
  void wake() { wakes++; }
};
}  // namespace

TEST_CASE("a waker made from a user's reference-counted object keeps it alive until the last clone") {
  std::atomic<bool> destroyed{false};
  Arc<Flag> flag = make_arc<Flag>(&destroyed);
  Flag* raw = flag.get();
  Waker waker = waker_from(flag);
  flag.reset();
  CHECK(raw->use_count() == 1);
  {
    Waker clone = waker;
    CHECK(raw->use_count() == 2);
    clone.wake_by_ref();
    std::move(clone).wake();
    CHECK(raw->use_count() == 1);
  }
  CHECK(raw->wakes == 2);
  CHECK_FALSE(destroyed);
  Waker last = std::move(waker);
  CHECK_FALSE(destroyed);
  { Waker gone = std::move(last); }
  CHECK(destroyed);
}

TEST_CASE("wakers made from the same object will_wake each other") {
  std::atomic<bool> destroyed{false};
  Arc<Flag> flag = make_arc<Flag>(&destroyed);
  Waker a = waker_from(flag);
  Waker b = waker_from(flag);
  CHECK(a.will_wake(b));
}
