// pollux::Coro: a coroutine that is a future. It awaits timers, channels
// and other Coros; it runs inside join, select, timeout and JoinSet; and
// destroyed in any suspended state it destroys what it awaits.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <coroutine>
#include <exception>
#include <optional>
#include <thread>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <pollux/interop/coroutine.hpp>
#include <pollux/pollux.hpp>

#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

Coro<int> twice(int x) {
  co_await sleep(5ms);
  co_return 2 * x;
}

Coro<int> sum() {
  int a = co_await twice(10);
  int b = co_await twice(11);
  co_return a + b;
}

// Counts its destruction, so a test sees what a destroyed Coro took down.
struct Witness {
  std::shared_ptr<int> destroyed;
  ~Witness() {
    if (destroyed) ++*destroyed;
  }
};

}  // namespace

TEST_CASE("a Coro awaits timers and other Coros, and block_on and spawn take it") {
  auto rt = Runtime::current_thread();
  CHECK(rt.block_on(sum()) == 42);
  CHECK(rt.block_on(rt.spawn(twice(1))).value() == 2);
  auto mt = Runtime::multi_thread(2);
  CHECK(mt.block_on(sum()) == 42);
}

TEST_CASE("a Coro that awaits only Ready futures finishes in its first poll") {
  auto ready_only = []() -> Coro<int> {
    int a = co_await ready_future(1);
    int b = co_await ready_future(2);
    co_return a + b;
  };
  test::Probe probe;
  auto coro = ready_only();
  auto polled = coro.poll(probe.cx);
  REQUIRE(polled.is_ready());
  CHECK(polled.value() == 3);
  CHECK(probe.counts.woken() == 0);
}

TEST_CASE("a Coro's exception is thrown by its poll") {
  auto fails = []() -> Coro<int> {
    co_await ready_future(1);
    throw std::runtime_error("inside the coroutine");
  };
  auto rt = Runtime::current_thread();
  CHECK_THROWS_WITH_AS(rt.block_on(fails()), "inside the coroutine", std::runtime_error);
}

TEST_CASE("a Coro receives from a channel another task sends on") {
  auto rt = Runtime::current_thread();
  auto [tx, rx] = mpsc::channel<int>(4);
  auto receive = [](mpsc::Receiver<int> rx) -> Coro<int> {
    int total = 0;
    while (auto value = co_await rx.recv()) total += *value;
    co_return total;
  };
  auto sender = rt.spawn(lazy([tx = std::move(tx)]() mutable {
    for (int i = 1; i <= 3; ++i) (void)tx.try_send(i);
    return 0;
  }));
  CHECK(rt.block_on(receive(std::move(rx))) == 6);
  (void)rt.block_on(std::move(sender));
}

TEST_CASE("a Coro serves a pollux socket: accepts, reads and writes back, on both runtimes") {
  for (bool multi : {false, true}) {
    auto rt = multi ? Runtime::multi_thread(2) : Runtime::current_thread();
    auto listener = TcpListener::bind("127.0.0.1:0");
    auto serve = [](TcpListener& l) -> Coro<std::size_t> {
      auto [stream, peer] = co_await l.accept();
      char buffer[64];
      std::size_t n = co_await stream.read(std::span(buffer));
      co_await stream.write_all(std::as_bytes(std::span(buffer, n)));
      co_return n;
    };
    auto call = [](SocketAddr server) -> Coro<std::string> {
      auto stream = co_await TcpStream::connect(server);
      co_await stream.write_all(std::as_bytes(std::span("ping", 4)));
      char buffer[4];
      co_await stream.read_exact(std::span(buffer));
      co_return std::string(buffer, 4);
    };
    auto [served, answer] = rt.block_on(join(serve(listener), call(listener.local_addr())));
    CHECK(served == 4);
    CHECK(answer == "ping");
  }
}

TEST_CASE("Coros join, select and time out like any future") {
  auto rt = Runtime::current_thread();
  auto [a, b] = rt.block_on(join(twice(1), twice(2)));
  CHECK(a + b == 6);
  auto slow = []() -> Coro<int> {
    co_await sleep(10s);
    co_return 0;
  };
  auto chosen = rt.block_on(select(slow(), twice(3)));
  CHECK(chosen.index() == 1);
  CHECK_FALSE(rt.block_on(timeout(10ms, slow())).has_value());
  auto joins = []() -> Coro<int> {
    JoinSet<int> set;
    for (int i = 0; i < 10; ++i) set.spawn(twice(i));
    int total = 0;
    while (auto done = co_await set.join_next()) total += done->value();
    co_return total;
  };
  CHECK(rt.block_on(joins()) == 90);
}

TEST_CASE("a Coro destroyed while it awaits destroys the future it awaits and its locals") {
  auto destroyed = std::make_shared<int>(0);
  auto waits = [](std::shared_ptr<int> destroyed) -> Coro<int> {
    Witness local{destroyed};
    co_await sleep(10s);  // never done in this test
    co_return 1;
  };
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  { auto never_polled = waits(destroyed); }
  CHECK(*destroyed == 0);  // a Coro not yet polled has not started: no local made
  {
    auto coro = waits(destroyed);
    CHECK(test::poll_once(coro).is_pending());
  }
  CHECK(*destroyed == 1);
  auto [tx, rx] = oneshot::channel<int>();
  auto awaits_receiver = [](oneshot::Receiver<int> rx) -> Coro<int> {
    auto value = co_await std::move(rx);
    co_return value.value_or(-1);
  };
  {
    auto coro = awaits_receiver(std::move(rx));
    CHECK(test::poll_once(coro).is_pending());
  }
  CHECK(tx.is_closed());  // the receiver in the frame went with it
}

// ---- pollux::awaitable: pollux futures inside a coroutine type of the user's ----

namespace {

// A user's own coroutine type, as small as one gets: it runs at once, and
// keeps its result (or exception) at its end for the test to read.
template <class T>
class Eager {
 public:
  struct promise_type {
    std::optional<T> value;
    std::exception_ptr error;
    Eager get_return_object() { return Eager(std::coroutine_handle<promise_type>::from_promise(*this)); }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_value(T v) { value = std::move(v); }
    void unhandled_exception() { error = std::current_exception(); }
  };
  Eager(Eager&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  ~Eager() { destroy(); }
  bool done() const { return handle_.done(); }
  T result() const {
    if (handle_.promise().error) std::rethrow_exception(handle_.promise().error);
    return *handle_.promise().value;
  }
  // Destroys the frame wherever the coroutine is suspended.
  void destroy() {
    if (handle_) std::exchange(handle_, nullptr).destroy();
  }

 private:
  explicit Eager(std::coroutine_handle<promise_type> handle) : handle_(handle) {}
  std::coroutine_handle<promise_type> handle_;
};

// Resumes coroutines later, from a queue the test drains: an executor of
// the user's.
struct Queue {
  std::vector<std::coroutine_handle<>> ready;
  void drain() {
    while (!ready.empty()) std::exchange(ready, {}).front().resume();
  }
};
struct ResumeLater {
  Queue* queue;
  void operator()(std::coroutine_handle<> coroutine) const { queue->ready.push_back(coroutine); }
};

}  // namespace

TEST_CASE("a coroutine of the user's awaits a Ready pollux future without suspending") {
  auto coroutine = []() -> Eager<int> { co_return co_await awaitable(ready_future(41)) + 1; }();
  REQUIRE(coroutine.done());
  CHECK(coroutine.result() == 42);
}

TEST_CASE("a coroutine of the user's is resumed by the wake of the future it awaits") {
  auto control = std::make_shared<test::Control>();
  auto coroutine = [](std::shared_ptr<test::Control> control) -> Eager<int> {
    co_return co_await awaitable(test::ManualFuture(control));
  }(control);
  CHECK_FALSE(coroutine.done());
  CHECK(control->polls == 1);
  control->complete(7);  // polls the future and resumes the coroutine, here
  REQUIRE(coroutine.done());
  CHECK(coroutine.result() == 7);
  CHECK(control->polls == 2);
}

TEST_CASE("a spurious wake polls the future and leaves the coroutine suspended") {
  auto control = std::make_shared<test::Control>();
  auto coroutine = [](std::shared_ptr<test::Control> control) -> Eager<int> {
    co_return co_await awaitable(test::ManualFuture(control));
  }(control);
  control->waker.wake_by_ref();
  CHECK(control->polls == 2);
  CHECK_FALSE(coroutine.done());
  control->complete(3);
  REQUIRE(coroutine.done());
  CHECK(coroutine.result() == 3);
}

TEST_CASE("a future that wakes itself during its poll is polled again before the coroutine suspends") {
  auto coroutine = []() -> Eager<int> {
    co_await awaitable(yield_now());
    co_await awaitable(yield_now());
    co_return 5;
  }();
  REQUIRE(coroutine.done());  // yield_now wakes by reference and keeps no waker
  CHECK(coroutine.result() == 5);
}

TEST_CASE("the resume function decides where the coroutine resumes") {
  Queue queue;
  auto control = std::make_shared<test::Control>();
  auto coroutine = [](std::shared_ptr<test::Control> control, Queue* queue) -> Eager<int> {
    co_return co_await awaitable(test::ManualFuture(control), ResumeLater{queue});
  }(control, &queue);
  control->complete(9);
  CHECK_FALSE(coroutine.done());  // queued, not resumed inside the wake
  REQUIRE(queue.ready.size() == 1);
  queue.drain();
  REQUIRE(coroutine.done());
  CHECK(coroutine.result() == 9);
}

TEST_CASE("an exception from the awaited future comes out of co_await") {
  auto control = std::make_shared<test::Control>();
  auto coroutine = [](std::shared_ptr<test::Control> control) -> Eager<int> {
    try {
      co_return co_await awaitable(test::ManualFuture(control));
    } catch (const std::runtime_error& e) {
      co_return -1;
    }
  }(control);
  control->throw_on_poll = true;
  control->waker.wake_by_ref();  // the poll on this (waking) thread throws
  REQUIRE(coroutine.done());
  CHECK(coroutine.result() == -1);
}

TEST_CASE("a coroutine of the user's awaits a timer and a channel of a runtime it entered") {
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  auto [tx, rx] = oneshot::channel<int>();
  auto coroutine = [](oneshot::Receiver<int> rx) -> Eager<int> {
    co_await awaitable(sleep(5ms));
    auto value = co_await awaitable(std::move(rx));
    co_return value.value_or(-1);
  }(std::move(rx));
  CHECK_FALSE(coroutine.done());
  rt.block_on(sleep(20ms));  // the runtime's timer turn resumes the coroutine
  CHECK_FALSE(coroutine.done());
  (void)tx.send(11);
  REQUIRE(coroutine.done());
  CHECK(coroutine.result() == 11);
}

TEST_CASE("a wake from another thread resumes the coroutine on that thread") {
  auto [tx, rx] = oneshot::channel<int>();
  std::thread::id resumed_on;
  auto coroutine = [](oneshot::Receiver<int> rx, std::thread::id* resumed_on) -> Eager<int> {
    auto value = co_await awaitable(std::move(rx));
    *resumed_on = std::this_thread::get_id();
    co_return value.value_or(-1);
  }(std::move(rx), &resumed_on);
  std::thread sender([tx = std::move(tx)]() mutable { (void)tx.send(4); });
  std::thread::id sender_id = sender.get_id();
  sender.join();
  REQUIRE(coroutine.done());
  CHECK(coroutine.result() == 4);
  CHECK(resumed_on == sender_id);
}

TEST_CASE("a frame destroyed while it awaits destroys the future, and a waker kept elsewhere then does nothing") {
  auto control = std::make_shared<test::Control>();
  auto destroyed = std::make_shared<int>(0);
  auto coroutine = [](std::shared_ptr<test::Control> control, std::shared_ptr<int> destroyed) -> Eager<int> {
    Witness local{destroyed};
    co_return co_await awaitable(test::ManualFuture(control));
  }(control, destroyed);
  coroutine.destroy();
  CHECK(*destroyed == 1);
  control->complete(1);  // the waker the future kept outlives it (rule 6): no poll, no resume
  CHECK(control->polls == 1);
}

TEST_CASE("a frame destroyed while another thread polls its future waits for that poll, and is not resumed") {
  // The future's second poll (on the waking thread) waits until the frame's
  // destruction has begun; the destruction must wait for the poll to end.
  struct Gate {
    std::atomic<int> stage{0};  // 1: the waker's poll began; 2: destruction began
    Waker waker;
  };
  auto gate = std::make_shared<Gate>();
  auto blocking = [gate]() {
    return poll_fn<int>([gate, polls = 0](Context& cx) mutable -> Poll<int> {
      if (++polls == 1) {
        gate->waker = cx.waker();
        return pending;
      }
      gate->stage.store(1);
      while (gate->stage.load() != 2) std::this_thread::yield();
      std::this_thread::sleep_for(10ms);  // the destruction is now waiting, if it waits at all
      return ready(1);
    });
  };
  auto resumed = std::make_shared<std::atomic<bool>>(false);
  auto coroutine = [](auto future, std::shared_ptr<std::atomic<bool>> resumed) -> Eager<int> {
    int value = co_await awaitable(std::move(future));
    resumed->store(true);
    co_return value;
  }(blocking(), resumed);
  std::thread waker_thread([gate] { gate->waker.wake_by_ref(); });
  while (gate->stage.load() != 1) std::this_thread::yield();
  gate->stage.store(2);
  coroutine.destroy();  // returns only after the poll: the future is gone with the frame
  waker_thread.join();
  CHECK_FALSE(resumed->load());
}
