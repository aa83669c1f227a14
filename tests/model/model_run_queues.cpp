// The multi-thread scheduler's run queues (src/exec/multi_thread/), compiled
// over the model checker's atomics and mutex and run under every
// interleaving of their users: a worker's local queue, four slots here so
// that pushes wrap the ring and overflow, with its owner pushing and
// popping while a thief steals half; and the inject queue with pushers
// racing workers that take shares of it. The invariant: every task queued
// is taken exactly once, never lost, never twice.
#include <doctest/doctest.h>

#include <array>
#include <memory>
#include <vector>

#include "../../src/exec/multi_thread/inject_queue.hpp"
#include "../../src/exec/multi_thread/local_queue.hpp"
#include "model_task.hpp"

namespace {

using model_task::report;
using pollux::detail::TaskHeader;
using pollux::detail::multi_thread::BasicLocalQueue;
using pollux::detail::multi_thread::InjectQueue;

constexpr int kTasks = 6;
using SmallQueue = BasicLocalQueue<4>;

struct World {
  std::vector<std::unique_ptr<TaskHeader>> tasks;
  std::array<int, kTasks> taken{};  // how many times each task was taken
  SmallQueue owner, thief;
  InjectQueue inject;

  World() {
    for (int i = 0; i < kTasks; ++i) tasks.push_back(std::make_unique<TaskHeader>(nullptr, 1, false, i));
  }
  // What a task carries: written by whoever queues it, then by whoever runs
  // it, so the queue must order the two (its release and acquire).
  std::array<model::Cell<int>, kTasks> payload;
  TaskHeader* publish(int i) {
    payload[i].write() = i;
    return tasks[i].get();
  }
  void take(TaskHeader* task) {
    if (task == nullptr) return;
    payload[task->id].write() = -1;  // run
    ++taken[task->id];
  }
  void take(pollux::detail::TaskList list) {
    while (TaskHeader* task = list.pop_front()) take(task);
  }
  // After the threads: whatever is still queued anywhere is taken now, and
  // then every task must have been taken exactly once.
  void check_each_taken_once() {
    while (TaskHeader* task = owner.pop()) take(task);
    while (TaskHeader* task = thief.pop()) take(task);
    take(inject.close());
    for (int count : taken) model::check(count == 1, "a task was lost, or taken twice");
  }
};

template <class Body>
std::uint64_t explore(int bound, Body body) {
  model::Checker checker(bound);
  return checker.explore([&] {
    auto w = std::make_shared<World>();
    model::Checker::Execution e = body(w);
    e.finish = [w] { w->check_each_taken_once(); };
    return e;
  });
}

}  // namespace

TEST_CASE("a local queue's owner pushing past its capacity and popping, racing a thief, loses and repeats no task") {
  report(explore(3, [](auto w) {
    model::Checker::Execution e;
    e.threads.push_back([w] {
      for (int i = 0; i < kTasks; ++i) {
        if (i == 3) w->take(w->owner.pop());
        model::check(w->owner.push_back_or_overflow(w->publish(i), w->inject) != SmallQueue::Pushed::Refused,
                     "a push failed on an open pool");
      }
    });
    e.threads.push_back([w] { w->take(w->owner.steal_into(w->thief)); });
    return e;
  }));
}

TEST_CASE("two thieves stealing from one local queue while its owner pops take each task once") {
  report(explore(2, [](auto w) {
    for (int i = 0; i < 4; ++i) w->owner.push_back_unchecked(w->publish(i));
    w->take(w->publish(5));  // never queued here
    model::Checker::Execution e;
    e.threads.push_back([w] {
      w->take(w->owner.pop());
      w->owner.push_back_unchecked(w->publish(4));
    });
    e.threads.push_back([w] { w->take(w->owner.steal_into(w->thief)); });
    e.threads.push_back([w] {
      SmallQueue other;
      w->take(w->owner.steal_into(other));
      while (TaskHeader* task = other.pop()) w->take(task);
    });
    return e;
  }));
}

TEST_CASE("an inject queue's pushes racing workers' shares and its close lose and repeat no task") {
  report(explore(2, [](auto w) {
    model::Checker::Execution e;
    e.threads.push_back([w] {
      pollux::detail::TaskList batch;
      batch.push_back(w->publish(0));
      batch.push_back(w->publish(1));
      if (!w->inject.push(batch)) w->take(std::move(batch));  // closed: the pusher keeps them
      if (!w->inject.push(w->publish(2))) w->take(w->publish(2));
    });
    e.threads.push_back([w] {
      if (!w->inject.push(w->publish(3))) w->take(w->publish(3));
    });
    e.threads.push_back([w] {
      w->take(w->inject.pop_share(2, 2));
      w->take(w->inject.pop_share(1, 4));
    });
    // Tasks 4 and 5 are never queued here: count them as taken.
    w->take(w->publish(4));
    w->take(w->publish(5));
    return e;
  }));
}
