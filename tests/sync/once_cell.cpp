// OnceCell: set, get, get_or_init with one initializer among many waiters,
// an initializer that is destroyed or throws, and two first polls racing
// on two threads (tokio's sync_once_cell.rs, in C++, and the orders it
// does not try).
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "support.hpp"

using namespace pollux;

namespace {

// An initializer's future that is Pending until the test opens it.
struct Gate {
  bool open = false;
  int value = 0;
  Waker waker;
  int polls = 0;
};

struct Gated {
  using Output = int;
  std::shared_ptr<Gate> gate;
  Poll<int> poll(Context& cx) {
    ++gate->polls;
    if (gate->open) return ready(gate->value);
    gate->waker = cx.waker();
    return pending;
  }
};

void open(Gate& gate, int value) {
  gate.open = true;
  gate.value = value;
  std::exchange(gate.waker, Waker()).wake();
}

}  // namespace

TEST_CASE("an empty cell has no value, and set gives it one") {
  OnceCell<std::string> cell;
  CHECK(cell.get() == nullptr);
  CHECK(!cell.initialized());
  CHECK(cell.set("one"));
  REQUIRE(cell.get() != nullptr);
  CHECK(*cell.get() == "one");
}

TEST_CASE("a second set is refused and the first value stays") {
  OnceCell<int> cell(1);
  CHECK(cell.set(2).error() == SetError::AlreadyInitialized);
  CHECK(*cell.get() == 1);
}

TEST_CASE("get_or_init on a cell with a value is Ready at once and never calls make") {
  OnceCell<int> cell(7);
  int calls = 0;
  auto get = cell.get_or_init([&] {
    ++calls;
    return ready_future(0);
  });
  auto got = test::poll_once(get);
  REQUIRE(got.is_ready());
  CHECK(got.value().get() == 7);
  CHECK(calls == 0);
}

TEST_CASE("get_or_init runs the initializer once and every later call gets its value") {
  OnceCell<int> cell;
  int calls = 0;
  auto make = [&] {
    ++calls;
    return ready_future(42);
  };
  CHECK(block_on(cell.get_or_init(make)).get() == 42);
  CHECK(block_on(cell.get_or_init(make)).get() == 42);
  CHECK(calls == 1);
  CHECK(&block_on(cell.get_or_init(make)).get() == cell.get());
}

TEST_CASE("waiters polled while another initializes get its value when it is set, and are woken for it") {
  OnceCell<int> cell;
  auto gate = std::make_shared<Gate>();
  int calls = 0;
  auto make = [&] {
    ++calls;
    return Gated{gate};
  };
  test::Probe first, second;
  auto a = cell.get_or_init(make);
  auto b = cell.get_or_init(make);
  CHECK(a.poll(first.cx).is_pending());
  CHECK(b.poll(second.cx).is_pending());  // polled before the value exists
  CHECK(calls == 1);
  CHECK(cell.set(5).error() == SetError::Initializing);
  open(*gate, 9);
  CHECK(first.counts.woken() == 1);
  CHECK(a.poll(first.cx).value().get() == 9);
  CHECK(second.counts.woken() == 1);  // the close woke the waiter
  CHECK(b.poll(second.cx).value().get() == 9);
  CHECK(calls == 1);
}

TEST_CASE("an initializer destroyed mid-way lets the next waiter initialize, and leaves no waker") {
  OnceCell<int> cell;
  auto gate = std::make_shared<Gate>();
  int calls = 0;
  auto make = [&] {
    ++calls;
    return Gated{gate};
  };
  test::Probe waiter;
  auto b = cell.get_or_init(make);
  {
    test::Probe initializer;
    auto a = cell.get_or_init(make);
    CHECK(a.poll(initializer.cx).is_pending());
    CHECK(b.poll(waiter.cx).is_pending());
    gate->waker = Waker();
    CHECK(initializer.counts.live() == 1);
  }  // a goes while it initializes: its permit passes to b
  CHECK(waiter.counts.woken() == 1);
  CHECK(!cell.initialized());
  CHECK(b.poll(waiter.cx).is_pending());  // b runs its own initializer now
  CHECK(calls == 2);
  open(*gate, 3);
  CHECK(b.poll(waiter.cx).value().get() == 3);
}

TEST_CASE("an initializer that throws lets the next get_or_init try again") {
  OnceCell<int> cell;
  auto failing = cell.get_or_init([]() -> decltype(ready_future(0)) { throw std::runtime_error("no value"); });
  CHECK_THROWS_WITH_AS((void)block_on(std::move(failing)), "no value", std::runtime_error);
  CHECK(!cell.initialized());
  CHECK(block_on(cell.get_or_init([] { return ready_future(4); })).get() == 4);
}

TEST_CASE("a waiting get_or_init destroyed before the value is set leaves no waker and takes no permit") {
  OnceCell<int> cell;
  auto gate = std::make_shared<Gate>();
  test::Probe first;
  auto a = cell.get_or_init([&] { return Gated{gate}; });
  CHECK(a.poll(first.cx).is_pending());
  {
    test::Probe second;
    auto b = cell.get_or_init([&] { return Gated{gate}; });
    CHECK(b.poll(second.cx).is_pending());
  }
  open(*gate, 1);
  CHECK(a.poll(first.cx).value().get() == 1);
}

TEST_CASE("the cell destroys its value when it goes") {
  auto counted = std::make_shared<int>(0);
  {
    OnceCell<std::shared_ptr<int>> cell;
    CHECK(cell.set(counted));
    CHECK(counted.use_count() == 2);
  }
  CHECK(counted.use_count() == 1);
}

TEST_CASE("two tasks on two threads polling get_or_init first at once run one initializer") {
  for (int round = 0; round < 200; ++round) {
    OnceCell<int> cell;
    std::atomic<int> calls{0};
    auto make = [&] {
      calls.fetch_add(1);
      return ready_future(round);
    };
    int seen[2] = {-1, -1};
    std::thread other([&] { seen[1] = block_on(cell.get_or_init(make)).get(); });
    seen[0] = block_on(cell.get_or_init(make)).get();
    other.join();
    CHECK(calls.load() == 1);
    CHECK(seen[0] == round);
    CHECK(seen[1] == round);
  }
}
