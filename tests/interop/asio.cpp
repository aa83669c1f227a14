// pollux::use_future: Asio operations (a timer, post, TCP, a resolver)
// awaited as pollux futures on both runtimes, with the io_context run by a
// thread of its own; and futures destroyed at every point, which cancel
// their operations through Asio's cancellation slots.
#include <doctest/doctest.h>

#include <asio.hpp>

#include <chrono>
#include <deque>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <pollux/interop/asio.hpp>
#include <pollux/interop/asio_runtime.hpp>
#include <pollux/interop/coroutine.hpp>
#include <pollux/pollux.hpp>

#include "alloc_support.hpp"
#include "asio_support.hpp"
#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;
using test::AsioThread;
using test::runtimes;

TEST_CASE("a timer's wait is a future, Ready without error when the timer expires") {
  AsioThread asio_thread;
  for (auto& rt : runtimes()) {
    asio::steady_timer timer(asio_thread.ioc, 5ms);
    Result<void, asio::error_code> waited = rt.block_on(timer.async_wait(use_future));
    CHECK(waited.has_value());
  }
}

TEST_CASE("asio::post through use_future is Ready once the io_context ran it") {
  AsioThread asio_thread;
  for (auto& rt : runtimes()) CHECK(rt.block_on(asio::post(asio_thread.ioc, use_future)).has_value());
}

TEST_CASE("a TCP write and read between Asio sockets carry the bytes and their counts") {
  AsioThread asio_thread;
  for (auto& rt : runtimes()) {
    asio::ip::tcp::acceptor acceptor(asio_thread.ioc, {asio::ip::make_address("127.0.0.1"), 0});
    asio::ip::tcp::socket client(asio_thread.ioc), server(asio_thread.ioc);
    auto accepted = acceptor.async_accept(server, use_future);
    auto connected = client.async_connect(acceptor.local_endpoint(), use_future);
    auto [a, c] = rt.block_on(join(std::move(accepted), std::move(connected)));
    REQUIRE(a.has_value());
    REQUIRE(c.has_value());
    std::string sent(100000, 'x');
    std::string got(sent.size(), '\0');
    auto wrote = asio::async_write(client, asio::buffer(sent), use_future);
    auto read = asio::async_read(server, asio::buffer(got), use_future);
    auto [w, r] = rt.block_on(join(std::move(wrote), std::move(read)));
    CHECK(w.value() == sent.size());
    CHECK(r.value() == sent.size());
    CHECK(got == sent);
  }
}

TEST_CASE("a resolver's results are the future's value") {
  AsioThread asio_thread;
  asio::ip::tcp::resolver resolver(asio_thread.ioc);
  auto rt = Runtime::current_thread();
  auto results = rt.block_on(resolver.async_resolve("127.0.0.1", "80", use_future));
  REQUIRE(results.has_value());
  REQUIRE(results.value().size() >= 1);
  CHECK(results.value().begin()->endpoint().port() == 80);
}

TEST_CASE("a failed operation's error_code is the Result's error") {
  AsioThread asio_thread;
  asio::ip::tcp::acceptor closed(asio_thread.ioc, {asio::ip::make_address("127.0.0.1"), 0});
  auto endpoint = closed.local_endpoint();
  closed.close();  // nobody listens there now
  asio::ip::tcp::socket socket(asio_thread.ioc);
  auto rt = Runtime::current_thread();
  auto connected = rt.block_on(socket.async_connect(endpoint, use_future));
  REQUIRE_FALSE(connected.has_value());
  CHECK(connected.error() == asio::error::connection_refused);
}

TEST_CASE("a Coro awaits Asio operations") {
  AsioThread asio_thread;
  auto waits = [](asio::io_context& ioc) -> Coro<int> {
    asio::steady_timer timer(ioc, 2ms);
    auto waited = co_await timer.async_wait(use_future);
    auto posted = co_await asio::post(ioc, use_future);
    co_return waited.has_value() && posted.has_value() ? 1 : 0;
  };
  auto rt = Runtime::current_thread();
  CHECK(rt.block_on(waits(asio_thread.ioc)) == 1);
}

TEST_CASE("a future destroyed before its first poll starts nothing") {
  AsioThread asio_thread;
  asio::steady_timer timer(asio_thread.ioc, 10s);
  { auto never_polled = timer.async_wait(use_future); }
  CHECK(asio_thread.finish(1000ms));  // no wait was ever started: run() ends at once
}

TEST_CASE("a started future destroyed cancels its operation, so the io_context is not kept waiting") {
  AsioThread asio_thread;
  std::deque<asio::steady_timer> timers;  // kept: only the futures' cancellations can end their waits
  for (auto& rt : runtimes()) {
    auto& timer = timers.emplace_back(asio_thread.ioc, 60s);
    CHECK_FALSE(rt.block_on(timeout(10ms, timer.async_wait(use_future))).has_value());
  }
  CHECK(asio_thread.finish(5000ms));  // both 60 s waits were cancelled through their slots
}

TEST_CASE("a storm of operations destroyed at random points cancels every one through its slot") {
  AsioThread asio_thread;
  std::deque<asio::steady_timer> long_waits;  // kept: only the futures' cancellations can end their waits
  std::mt19937 rng(42);
  for (auto& rt : runtimes()) {
    constexpr int kOperations = 50000;  // on each runtime: 100,000 in all
    rt.block_on(poll_fn<int>([&, i = 0](Context& cx) mutable -> Poll<int> {
      for (; i < kOperations; ++i) {
        switch (rng() % 4) {
          case 0: {  // never polled: nothing starts
            asio::steady_timer timer(asio_thread.ioc, 10s);
            auto wait = timer.async_wait(use_future);
            break;
          }
          case 1: {  // polled once, destroyed while its 60 s wait runs
            auto wait = long_waits.emplace_back(asio_thread.ioc, 60s).async_wait(use_future);
            CHECK(wait.poll(cx).is_pending());
            break;
          }
          case 2: {  // a post polled once and destroyed, run or not
            auto posted = asio::post(asio_thread.ioc, use_future);
            (void)posted.poll(cx);
            break;
          }
          default: {  // a wait that is due at once, polled once: it may have completed already
            auto wait = long_waits.emplace_back(asio_thread.ioc, 0s).async_wait(use_future);
            (void)wait.poll(cx);
            break;
          }
        }
      }
      return ready(0);
    }));
  }
  CHECK(asio_thread.finish(10000ms));  // no 60 s wait is left to keep run() going
}

TEST_CASE("once warm, an operation through use_future allocates nothing") {
  AsioThread asio_thread;
  auto rt = Runtime::current_thread();
  auto round = [&](int n) {
    return test::allocations_of(rt, n, [&](int) { return asio::post(asio_thread.ioc, use_future); });
  };
  (void)round(1000);  // warms the slab on both threads and Asio's thread-local caches
  long allocations = round(1000);
  if (detail::kSlabEnabled) CHECK(allocations == 0);  // AddressSanitizer: the slab is operator new
}

// pollux inside Asio: an AsioRuntime's tasks run in the io_context's
// handlers, on the one thread that calls ioc.run().

TEST_CASE("a pollux task inside an io_context awaits a pollux sleep and an Asio timer on the one thread") {
  asio::io_context ioc;
  AsioRuntime pollux_rt(ioc);
  auto caller = std::this_thread::get_id();
  bool same_thread = false, timer_ok = false;
  auto body = [&]() -> Coro<void> {
    co_await sleep(10ms);
    asio::steady_timer timer(ioc, 5ms);
    timer_ok = (co_await timer.async_wait(use_future)).has_value();
    same_thread = std::this_thread::get_id() == caller;
    pollux_rt.stop();  // lets ioc.run() return
  };
  auto handle = pollux_rt.spawn(body());
  ioc.run();
  CHECK(timer_ok);
  CHECK(same_thread);
}

TEST_CASE("a pollux task inside an io_context is woken from another thread") {
  asio::io_context ioc;
  AsioRuntime pollux_rt(ioc);
  auto [tx, rx] = oneshot::channel<int>();
  int got = 0;
  auto handle = pollux_rt.spawn(map(std::move(rx), [&](auto value) {
    got = value.value_or(-1);
    pollux_rt.stop();
  }));
  std::thread sender([tx = std::move(tx)]() mutable {
    std::this_thread::sleep_for(20ms);
    (void)tx.send(42);
  });
  ioc.run();
  sender.join();
  CHECK(got == 42);
}

TEST_CASE("pollux sockets and Asio sockets talk to each other inside one io_context") {
  asio::io_context ioc;
  AsioRuntime pollux_rt(ioc);
  auto listener = TcpListener::bind("127.0.0.1:0");
  auto server = pollux_rt.spawn([](TcpListener& l) -> Coro<void> {
    auto [stream, peer] = co_await l.accept();
    char buffer[64];
    std::size_t n = co_await stream.read(std::span(buffer));
    co_await stream.write_all(std::as_bytes(std::span(buffer, n)));
  }(listener));
  asio::ip::tcp::socket client(ioc);
  std::string echoed(5, '\0');
  client.async_connect({asio::ip::make_address("127.0.0.1"), listener.local_addr().port()}, [&](asio::error_code ec) {
    REQUIRE_FALSE(ec);
    asio::async_write(client, asio::buffer(std::string_view("hello")), [&](asio::error_code wec, std::size_t) {
      REQUIRE_FALSE(wec);
      asio::async_read(client, asio::buffer(echoed), [&](asio::error_code rec, std::size_t) {
        REQUIRE_FALSE(rec);
        pollux_rt.stop();
      });
    });
  });
  ioc.run();
  CHECK(echoed == "hello");
}

TEST_CASE("an io_context that runs a waiting pollux runtime uses no CPU") {
  asio::io_context ioc;
  AsioRuntime pollux_rt(ioc);
  auto handle = pollux_rt.spawn(map(sleep(300ms), [&] { pollux_rt.stop(); }));
  double cpu_before = test::process_cpu_ms();
  ioc.run();
  CHECK(test::process_cpu_ms() - cpu_before < 100.0);  // 300 ms of waiting, in Asio's epoll_wait
}

TEST_CASE("a busy pollux task leaves the io_context's own handlers their turn") {
  asio::io_context ioc;
  AsioRuntime pollux_rt(ioc, {}, 8);
  int yields = 0;
  bool asio_ran_meanwhile = false;
  auto busy = pollux_rt.spawn(poll_fn<void>([&](Context& cx) -> Poll<void> {
    if (++yields == 10'000) {
      pollux_rt.stop();
      return ready();
    }
    cx.waker().wake_by_ref();
    return pending;
  }));
  asio::post(ioc, [&] { asio_ran_meanwhile = yields < 10'000; });
  ioc.run();
  CHECK(asio_ran_meanwhile);
}

TEST_CASE("destroying an AsioRuntime destroys its tasks, and the io_context's run() returns") {
  asio::io_context ioc;
  int drops = 0;
  {
    AsioRuntime pollux_rt(ioc);
    auto handle = pollux_rt.spawn(test::PendingWithDrop(&drops));
    asio::post(ioc, [] {});
    ioc.run_one();  // the first turn: the task waits
  }
  CHECK(drops == 1);
  ioc.restart();
  ioc.run();  // nothing is left to wait for
}

TEST_CASE("a pollux socket's data reaches its task while Asio handlers keep waking other pollux tasks") {
  asio::io_context ioc;
  AsioRuntime pollux_rt(ioc);
  auto listener = TcpListener::bind("127.0.0.1:0");
  int ticks = 0;
  std::string received;
  // Woken again and again from Asio's handlers (the direct path, no eventfd).
  // (Named lambdas: a coroutine lambda's captures live in the lambda object.)
  auto tick = [&]() -> Coro<void> {
    asio::steady_timer timer(ioc);
    while (received.empty()) {
      timer.expires_after(1ms);
      (void)co_await timer.async_wait(use_future);
      ++ticks;
    }
  };
  auto ticker = pollux_rt.spawn(tick());
  // Woken by its socket, through the runtime's fd.
  auto read = [&]() -> Coro<void> {
    auto [stream, peer] = co_await listener.accept();
    char buffer[16];
    std::size_t n = co_await stream.read(std::span(buffer));
    received.assign(buffer, n);
    pollux_rt.stop();
  };
  auto reader = pollux_rt.spawn(read());
  asio::ip::tcp::socket client(ioc);
  client.connect({asio::ip::make_address("127.0.0.1"), listener.local_addr().port()});
  asio::steady_timer later(ioc, 20ms);
  later.async_wait([&](asio::error_code) { asio::write(client, asio::buffer(std::string_view("hi"))); });
  ioc.run();
  CHECK(received == "hi");
  CHECK(ticks >= 1);  // the ticker was woken from Asio handlers meanwhile
}

TEST_CASE("an AsioRuntime asked for zero tasks per turn is a clear error") {
  asio::io_context ioc;
  CHECK_THROWS_AS(AsioRuntime(ioc, {}, 0), std::invalid_argument);
  AsioRuntime after(ioc);  // the failed one left the io_context as it was
  after.stop();
  ioc.run();
}
