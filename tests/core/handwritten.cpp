// Writing a future by hand: POLLUX_TRY_READY, POLLUX_TRY_READY_ASSIGN and
// FutureSlot make the state machine of "read two values, add them" as
// short as its Rust.
#include <doctest/doctest.h>

#include <memory>

#include "support.hpp"

using namespace pollux;

namespace {
// Polls a first child, then starts a second from the first's value.
class AddTwo {
 public:
  using Output = int;
  AddTwo(std::shared_ptr<test::Control> a, std::shared_ptr<test::Control> b) : a_(std::move(a)), b_(std::move(b)) {}

  Poll<int> poll(Context& cx) {
    if (!first_) {
      POLLUX_TRY_READY_ASSIGN(first_, slot_.poll(cx, [&] { return test::ManualFuture(a_); }));
    }
    POLLUX_TRY_READY_ASSIGN(int second, slot_.poll(cx, [&] { return test::ManualFuture(b_); }));
    return ready(*first_ + second);
  }

 private:
  std::shared_ptr<test::Control> a_, b_;
  FutureSlot<test::ManualFuture> slot_;
  std::optional<int> first_;
};

class Flag {
 public:
  using Output = void;
  explicit Flag(bool* set) : set_(set) {}
  Poll<void> poll(Context&) {
    if (!*set_) return pending;
    return ready();
  }

 private:
  bool* set_;
};
}  // namespace

TEST_CASE("POLLUX_TRY_READY_ASSIGN returns Pending while the child is, then takes its value") {
  auto a = std::make_shared<test::Control>();
  auto b = std::make_shared<test::Control>();
  AddTwo add(a, b);
  test::Probe probe;
  CHECK(add.poll(probe.cx).is_pending());
  a->complete(2);
  CHECK(add.poll(probe.cx).is_pending());
  CHECK(b->polls == 1);
  b->complete(3);
  CHECK(add.poll(probe.cx).value() == 5);
  CHECK(a->polls == 2);  // the first child is never polled after Ready (rule 3)
}

TEST_CASE("POLLUX_TRY_READY returns Pending from a poll of void while the child is") {
  bool set = false;
  auto outer = poll_fn<void>([flag = Flag(&set)](Context& cx) mutable -> Poll<void> {
    POLLUX_TRY_READY(flag.poll(cx));
    return ready();
  });
  CHECK(test::poll_once(outer).is_pending());
  set = true;
  CHECK(test::poll_once(outer).is_ready());
}

TEST_CASE("a FutureSlot is empty again once its child is Ready") {
  auto control = std::make_shared<test::Control>();
  FutureSlot<test::ManualFuture> slot;
  CHECK_FALSE(slot.in_flight());
  slot.start(test::ManualFuture(control));
  CHECK(test::poll_once(slot).is_pending());
  CHECK(slot.in_flight());
  control->value = 1;
  CHECK(test::poll_once(slot).value() == 1);
  CHECK_FALSE(slot.in_flight());
  CHECK_THROWS_AS((void)test::poll_once(slot), std::logic_error);
}

TEST_CASE("cancelling a FutureSlot destroys its child and the child's registrations") {
  int drops = 0;
  FutureSlot<test::PendingWithDrop> slot;
  slot.start(test::PendingWithDrop(&drops));
  CHECK(test::poll_once(slot).is_pending());
  slot.cancel();
  CHECK(drops == 1);
  CHECK_FALSE(slot.in_flight());
}
