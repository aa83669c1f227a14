// oneshot's protocol (sync/oneshot.hpp), compiled over the model checker's
// atomics and run under every interleaving of its sender and receiver at
// each operation on the state word: send, drop either side, poll, closed().
// The invariants: the value arrives exactly once or comes back to the
// sender; no wake is lost (a lost one leaves a side asleep for ever); no
// waker outlives its future; the channel is freed exactly once, after the
// last touch (the model slab reports a touch after free); a channel made
// in a Slot leaves the slot free and empty for the next one.
#include <doctest/doctest.h>

#include <memory>
#include <optional>

#include "model_slab.hpp"
#include "model_task.hpp"
#include "pollux/sync/oneshot.hpp"

namespace {

using Value = std::shared_ptr<int>;
using model_task::poll_once;
using model_task::report;
using model_task::run_to_completion;

template <bool kInSlot>
struct World {
  std::optional<pollux::oneshot::Slot<Value>> slot;  // first: it outlives the sides
  std::optional<pollux::oneshot::Sender<Value, kInSlot>> tx;
  std::optional<pollux::oneshot::Receiver<Value, kInSlot>> rx;
  std::weak_ptr<int> sent;  // the value, to see that it was dropped in the end
  model_task::TaskWaker rx_task, tx_task;

  // A channel from the slab, or made in a Slot.
  World() {
    if constexpr (kInSlot) {
      auto channel = slot.emplace().channel();
      tx.emplace(std::move(channel->first));
      rx.emplace(std::move(channel->second));
    } else {
      auto [s, r] = pollux::oneshot::channel<Value>();
      tx.emplace(std::move(s));
      rx.emplace(std::move(r));
    }
  }
};

// The checks every scenario ends with, once both sides are gone. `blocks`:
// the slab blocks out before the scenario (an earlier scenario that
// deadlocked leaves its blocks behind).
template <bool kInSlot>
void check_clean(World<kInSlot>& w, std::size_t blocks) {
  w.tx.reset();
  w.rx.reset();
  model::check(model_live_blocks() == blocks, "the channel was never freed");
  model::check(w.sent.expired(), "the value was never dropped");
  model::check(!w.rx_task.leaked(), "a clone of the receiver's waker leaked");
  model::check(!w.tx_task.leaked(), "a clone of closed()'s waker leaked");
  if constexpr (kInSlot) {
    model::check(!w.slot->in_use(), "the slot was never made free");
    auto next = w.slot->channel();
    model::check(next.has_value(), "the free slot refused the next channel");
    model::check(!poll_once(next->second, w.rx_task), "the next channel found the last one's value or end");
  }
}

template <bool kInSlot = false, class Body>
std::uint64_t explore(Body body, int bound = 3) {
  model::Checker checker(bound);
  std::size_t blocks = model_live_blocks();
  return checker.explore([&] {
    auto w = std::make_shared<World<kInSlot>>();
    model::Checker::Execution e = body(w);
    e.finish = [w, blocks] { check_clean(*w, blocks); };
    return e;
  });
}

template <bool kInSlot>
void send(World<kInSlot>& w, bool must_arrive) {
  auto value = std::make_shared<int>(7);
  w.sent = value;
  auto result = w.tx->send(std::move(value));
  model::check(result.has_value() || !must_arrive, "send failed while the receiver waited");
  if (!result.has_value()) model::check(*result.error().value == 7, "a refused send did not give the value back");
}

// A send races the receiver's drop after one poll (any World).
auto send_races_receiver_drop = [](auto w) {
  model::Checker::Execution e;
  e.threads.push_back([w] { send(*w, false); });
  e.threads.push_back([w] {
    (void)poll_once(*w->rx, w->rx_task);
    w->rx.reset();
  });
  return e;
};

// The sender's drop without a send races a receive (any World).
auto sender_drop_races_receive = [](auto w) {
  model::Checker::Execution e;
  e.threads.push_back([w] { w->tx.reset(); });
  e.threads.push_back([w] {
    auto got = run_to_completion(*w->rx, w->rx_task);
    model::check(!got.has_value(), "the receiver got a value nobody sent");
  });
  return e;
};

}  // namespace

TEST_CASE("a oneshot value sent while the receiver polls arrives exactly once, in any order") {
  report(explore([](auto w) {
    model::Checker::Execution e;
    e.threads.push_back([w] { send(*w, true); });
    e.threads.push_back([w] {
      auto got = run_to_completion(*w->rx, w->rx_task);
      model::check(got.has_value() && *got.value() == 7, "the receiver did not get the value");
    });
    return e;
  }));
}

TEST_CASE(
    "a oneshot receiver dropped after one poll races a send: the value is received, refused or dropped, never lost") {
  report(explore(send_races_receiver_drop));
}

TEST_CASE("a oneshot sender dropped without sending wakes the receiver with Closed") {
  report(explore(sender_drop_races_receive));
}

TEST_CASE("a oneshot sender's closed() completes when the receiver goes, in any order") {
  report(explore([](auto w) {
    model::Checker::Execution e;
    e.threads.push_back([w] {
      auto closed = w->tx->closed();
      run_to_completion(closed, w->tx_task);
      model::check(w->tx->is_closed(), "closed() completed while the receiver was there");
    });
    e.threads.push_back([w] {
      (void)poll_once(*w->rx, w->rx_task);
      w->rx.reset();
    });
    return e;
  }));
}

TEST_CASE("a oneshot sender's closed() dropped while pending races the receiver's drop and leaks no waker") {
  report(explore([](auto w) {
    model::Checker::Execution e;
    e.threads.push_back([w] {
      auto closed = w->tx->closed();
      (void)poll_once(closed, w->tx_task);
    });
    e.threads.push_back([w] { w->rx.reset(); });
    return e;
  }));
}

TEST_CASE("a oneshot slot is free again, and clean, after a send races the receiver's drop") {
  report(explore<true>(send_races_receiver_drop));
}

TEST_CASE("a oneshot slot is free again, and clean, after a sender's drop races a receive") {
  report(explore<true>(sender_drop_races_receive));
}
