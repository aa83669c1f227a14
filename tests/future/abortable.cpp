// abortable(f): the future ends with f's output, or with Aborted once its
// handle aborted it, from this thread or another, before or during a poll.
#include <doctest/doctest.h>

#include <thread>

#include "support.hpp"

using namespace pollux;

TEST_CASE("an abortable future that is not aborted ends with its future's output") {
  auto [f, handle] = abortable(ready_future(5));
  auto out = test::poll_once(f);
  REQUIRE(out.is_ready());
  CHECK(out.value().value() == 5);
  CHECK_FALSE(handle.is_aborted());
}

TEST_CASE("aborting a pending future wakes it, and it ends with Aborted without polling its future again") {
  test::Probe probe;
  auto control = std::make_shared<test::Control>();
  auto [f, handle] = abortable(test::ManualFuture(control));
  CHECK(f.poll(probe.cx).is_pending());
  handle.abort();
  CHECK(probe.counts.woken() == 1);
  auto out = f.poll(probe.cx);
  REQUIRE(out.is_ready());
  CHECK(out.value().error() == Aborted{});
  CHECK(control->polls == 1);
  CHECK(control.use_count() == 1);  // the future was destroyed on that poll
}

TEST_CASE("a future aborted before its first poll never polls its future") {
  auto control = std::make_shared<test::Control>();
  auto [f, handle] = abortable(test::ManualFuture(control));
  handle.abort();
  CHECK_FALSE(test::poll_once(f).value().has_value());
  CHECK(control->polls == 0);
}

TEST_CASE("aborting after the future finished changes nothing") {
  auto [f, handle] = abortable(ready_future(1));
  CHECK(test::poll_once(f).value().value() == 1);
  handle.abort();
  CHECK(handle.is_aborted());
}

TEST_CASE("destroying an abortable future drops its waker, and a later abort wakes nobody") {
  test::Probe probe;
  auto control = std::make_shared<test::Control>();
  std::optional<AbortHandle> handle;
  {
    auto [f, h] = abortable(test::ManualFuture(control));
    handle.emplace(h);
    CHECK(f.poll(probe.cx).is_pending());
  }
  control->waker = Waker();
  CHECK(probe.counts.live() == 1);
  handle->abort();
  CHECK(probe.counts.woken() == 0);
}

TEST_CASE("an abort from another thread ends a task on a thread pool") {
  auto rt = Runtime::multi_thread(2);
  for (int round = 0; round < 50; ++round) {
    auto [f, handle] = abortable(pending_future<int>());
    std::thread aborter([h = handle] { h.abort(); });        // races the first poll
    auto out = rt.block_on(rt.spawn(std::move(f))).value();  // the task ran: its output is abortable's
    aborter.join();
    CHECK_FALSE(out.has_value());
  }
}
