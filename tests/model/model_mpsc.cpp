// The mpsc channel's protocols, compiled over the model checker's atomics
// and run under every interleaving of senders and the receiver: the block
// queue (sync/detail/block_queue.hpp) with blocks of two slots, so that a
// few values cross blocks and blocks are reused while senders may still
// walk through them; and the channel (sync/mpsc.hpp) on top of it: the
// receiver's waker, the last sender's close, and the bounded channel's
// permits. The invariants: every value sent is received exactly once and
// in each sender's order; the end is seen only after every value; no wake
// is lost (a lost one leaves the receiver asleep for ever, which the
// checker reports as a deadlock); nothing leaks.
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "model_task.hpp"
#include "pollux/sync/detail/block_queue.hpp"
#include "pollux/sync/mpsc.hpp"

namespace {

using model_task::report;
using model_task::run_to_completion;
using model_task::TaskWaker;

// --- the block queue ------------------------------------------------------

using Queue = pollux::detail::BlockQueue<int, 2>;

// The queue with the receiver's side of the wake: a sender that fills the
// slot the receiver parked on bumps `wakes` (a plain counter, as a waker's:
// the checker reads it to know when the receiver may run).
struct QueueWorld {
  Queue queue;
  std::atomic<int> wakes{0};
  model::Edge woke;  // a wake happens-before the pop it leads to, as a run queue makes it
  void wake() {
    woke.release();
    wakes.fetch_add(1);
  }
  std::vector<int> received;
};

// Pops until the queue closed, as poll_recv does: look, note the wakes
// seen, look again parking on the slot, and sleep until a wake came.
void drain(QueueWorld& w) {
  for (;;) {
    std::optional<int> value;
    Queue::PopState state = w.queue.pop(value, Queue::IfEmpty::Return);
    if (state == Queue::PopState::Empty) {
      int seen = w.wakes.load();
      state = w.queue.pop(value, Queue::IfEmpty::MarkWaiting);
      if (state == Queue::PopState::Empty) {
        model::block_until([&w, seen] { return w.wakes.load() != seen; });
        w.woke.acquire();
        continue;
      }
    }
    if (state == Queue::PopState::Closed) return;
    w.received.push_back(*value);
  }
}

// Each sender's values arrive once each and in its order: sender s sends
// s*10+1, s*10+2, ...
void check_received(const std::vector<int>& received, int senders, int each) {
  model::check(static_cast<int>(received.size()) == senders * each, "a value was lost or received twice");
  for (int s = 0; s < senders; ++s) {
    int next = s * 10 + 1;
    for (int v : received) {
      if (v / 10 == s) {
        model::check(v == next, "a sender's values arrived out of order");
        ++next;
      }
    }
  }
}

std::uint64_t explore_queue(int senders, int each, int bound) {
  model::Checker checker(bound);
  return checker.explore([=] {
    auto w = std::make_shared<QueueWorld>();
    auto left = std::make_shared<pollux::detail::Atomic<int>>(senders);
    model::Checker::Execution e;
    for (int s = 0; s < senders; ++s) {
      e.threads.push_back([w, left, s, each] {
        for (int i = 1; i <= each; ++i) {
          model::check(w->queue.push(s * 10 + i, [&w] { w->wake(); }), "a push failed on an open queue");
        }
        if (left->fetch_sub(1) == 1) {
          w->queue.close();
          w->wake();  // as the last sender wakes the receiver
        }
      });
    }
    e.threads.push_back([w] { drain(*w); });
    e.finish = [w, senders, each] { check_received(w->received, senders, each); };
    return e;
  });
}

// --- the channel ----------------------------------------------------------

struct ChannelWorld {
  TaskWaker receiver, sender;
  std::vector<int> received;
};

// Receives until the channel ends.
template <class Receiver>
void receive_all(ChannelWorld& w, Receiver& rx) {
  for (;;) {
    auto recv = rx.recv();
    std::optional<int> value = run_to_completion(recv, w.receiver);
    if (!value) return;
    w.received.push_back(*value);
  }
}

}  // namespace

TEST_CASE("a block queue delivers one sender's values across blocks while the receiver parks and reuses blocks") {
  report(explore_queue(1, 5, 2));
}

TEST_CASE("a block queue delivers two senders' values across blocks, each in order, in any interleaving") {
  report(explore_queue(2, 2, 2));
}

TEST_CASE("a block queue reuses no block that a preempted sender may still walk through") {
  report(explore_queue(2, 3, 1));
}

TEST_CASE("an unbounded channel's receiver gets every value of two senders, then the end") {
  model::Checker checker(2);
  report(checker.explore([] {
    auto w = std::make_shared<ChannelWorld>();
    auto [tx, rx] = pollux::mpsc::unbounded_channel<int>();
    auto first = std::make_shared<std::optional<pollux::mpsc::UnboundedSender<int>>>(tx);
    auto second = std::make_shared<std::optional<pollux::mpsc::UnboundedSender<int>>>(std::move(tx));
    auto receiver = std::make_shared<pollux::mpsc::Receiver<int>>(std::move(rx));
    model::Checker::Execution e;
    e.threads.push_back([first] {
      (void)(*first)->send(1);
      first->reset();
    });
    e.threads.push_back([second] {
      (void)(*second)->send(11);
      second->reset();
    });
    e.threads.push_back([w, receiver] { receive_all(*w, *receiver); });
    e.finish = [w] {
      check_received(w->received, 2, 1);
      model::check(!w->receiver.leaked(), "the receiver's waker outlived its receive");
    };
    return e;
  }));
}

TEST_CASE("a bounded channel of one slot passes three values: each send waits for the room the last receive freed") {
  model::Checker checker(2);
  report(checker.explore([] {
    auto w = std::make_shared<ChannelWorld>();
    auto [tx, rx] = pollux::mpsc::channel<int>(1);
    auto sender = std::make_shared<std::optional<pollux::mpsc::Sender<int>>>(std::move(tx));
    auto receiver = std::make_shared<pollux::mpsc::Receiver<int>>(std::move(rx));
    model::Checker::Execution e;
    e.threads.push_back([w, sender] {
      for (int v = 1; v <= 3; ++v) {
        auto send = (*sender)->send(v);
        model::check(run_to_completion(send, w->sender).has_value(), "a send failed with the receiver there");
      }
      sender->reset();
    });
    e.threads.push_back([w, receiver] { receive_all(*w, *receiver); });
    e.finish = [w] {
      check_received(w->received, 1, 3);
      model::check(!w->receiver.leaked() && !w->sender.leaked(), "a waker outlived its future");
    };
    return e;
  }));
}

TEST_CASE("a receiver dropped while a sender sends leaves no value and no channel behind") {
  model::Checker checker(3);
  report(checker.explore([] {
    auto value = std::make_shared<int>(1);
    auto [tx, rx] = pollux::mpsc::unbounded_channel<std::shared_ptr<int>>();
    auto sender = std::make_shared<std::optional<pollux::mpsc::UnboundedSender<std::shared_ptr<int>>>>(std::move(tx));
    auto receiver = std::make_shared<std::optional<pollux::mpsc::Receiver<std::shared_ptr<int>>>>(std::move(rx));
    std::weak_ptr<int> sent = value;
    model::Checker::Execution e;
    e.threads.push_back([sender, value]() mutable {
      (void)(*sender)->send(std::move(value));
      sender->reset();
    });
    e.threads.push_back([receiver] { receiver->reset(); });
    e.finish = [sent] { model::check(sent.expired(), "a value sent to a dropped receiver was never dropped"); };
    return e;
  }));
}
