// broadcast's protocol (sync/broadcast.hpp), compiled over the model
// checker's atomics and mutex and run under every interleaving of a sender
// that overwrites a small ring with receivers that read it: the lock-free
// read of small values (a seqlock per slot, racing the rewrite of the very
// slot it reads), the locked read of other values, lagging, and the end.
// The invariants: a receiver never reads a torn or older value, every value
// is received or counted as missed, the end comes only after the last value;
// no wake is lost (a receiver asleep for ever is a deadlock); no waker
// outlives its recv(); a value nobody can still receive is destroyed.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "model_task.hpp"
#include "pollux/sync/broadcast.hpp"

namespace {

using model_task::report;
using model_task::run_to_completion;
using model_task::TaskWaker;

constexpr std::uint64_t kSent = 3;

// Two words the sender writes as one (the lock-free path).
struct Pair {
  std::uint64_t a;
  std::uint64_t b;
};

std::uint64_t number_of(const Pair& p) {
  model::check(p.a == p.b, "a receiver read a torn value");
  return p.a;
}
std::uint64_t number_of(const std::shared_ptr<std::uint64_t>& p) { return *p; }

Pair make(std::uint64_t v, Pair*) { return Pair{v, v}; }
std::shared_ptr<std::uint64_t> make(std::uint64_t v, std::shared_ptr<std::uint64_t>*) {
  return std::make_shared<std::uint64_t>(v);
}

// Receives each value newer than the last, every value either received or
// counted in a Lagged; then, with `until_end`, the end.
template <class T>
void receive_all(pollux::broadcast::Receiver<T>& rx, TaskWaker& task, bool until_end) {
  std::uint64_t last = 0;
  std::uint64_t accounted = 0;
  while (until_end || accounted < kSent) {
    auto recv = rx.recv();
    auto result = run_to_completion(recv, task);
    if (result.has_value()) {
      std::uint64_t v = number_of(result.value());
      model::check(v > last, "a receiver got an older value, or one twice");
      last = v;
      ++accounted;
    } else if (result.error().is_lagged()) {
      accounted += result.error().missed;
    } else {
      model::check(accounted == kSent, "the end came before every value was received or missed");
      return;
    }
  }
}

struct Tasks {
  TaskWaker task[2];
  TaskWaker& operator[](int i) { return task[i]; }
};

// The sender sends kSent values into a ring of `capacity`; with
// `sender_stays` it is dropped only after the schedule (so every value
// must be woken for, not found at the end).
template <class T>
std::uint64_t explore(std::size_t capacity, int receivers, bool sender_stays, int bound) {
  model::Checker checker(bound);
  return checker.explore([=] {
    auto tasks = std::make_shared<Tasks>();
    auto [tx, rx] = pollux::broadcast::channel<T>(capacity);
    auto sender = std::make_shared<std::optional<pollux::broadcast::Sender<T>>>(std::move(tx));
    auto first = std::make_shared<pollux::broadcast::Receiver<T>>(std::move(rx));
    auto second = std::make_shared<pollux::broadcast::Receiver<T>>(first->resubscribe());
    if (receivers == 1) second.reset();
    model::Checker::Execution e;
    auto sent = std::make_shared<std::vector<std::weak_ptr<std::uint64_t>>>();
    e.threads.push_back([sender, sent, sender_stays] {
      for (std::uint64_t v = 1; v <= kSent; ++v) {
        T value = make(v, static_cast<T*>(nullptr));
        if constexpr (!std::is_same_v<T, Pair>) sent->push_back(value);
        (void)(*sender)->send(std::move(value));
      }
      if (!sender_stays) sender->reset();
    });
    e.threads.push_back([first, tasks, sender_stays] { receive_all(*first, (*tasks)[0], !sender_stays); });
    if (second)
      e.threads.push_back([second, tasks, sender_stays] { receive_all(*second, (*tasks)[1], !sender_stays); });
    e.finish = [tasks, sent, sender] {
      sender->reset();
      for (int i = 0; i < 2; ++i) model::check(!(*tasks)[i].leaked(), "a recv()'s waker outlived it");
      for (auto& value : *sent) model::check(value.expired(), "a value every receiver took or missed is still kept");
    };
    return e;
  });
}

}  // namespace

TEST_CASE(
    "a broadcast receiver reads small values without the lock, never torn, while the sender overwrites the ring") {
  report(explore<Pair>(2, 1, true, 3));
}

TEST_CASE("two broadcast receivers each get every value or count it missed, then the end") {
  report(explore<Pair>(2, 2, false, 1));
}

TEST_CASE("broadcast receivers of values read under the lock get each once, and values nobody needs are dropped") {
  report(explore<std::shared_ptr<std::uint64_t>>(2, 2, false, 1));
}
