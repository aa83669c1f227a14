// The embedded profile's test program: the same source runs in QEMU
// (mps2-an386, SysTick at 1 kHz) and on the host (ticks delivered when the
// executor sleeps), under the sanitizers there. No test framework: the
// profile has no exceptions and no heap. Each check prints "ok" or "FAIL";
// the exit status is the number of failures.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <pollux/core/atomic_waker.hpp>
#include <pollux/embedded/executor.hpp>
#include <pollux/embedded/interval.hpp>
#include <pollux/embedded/sleep.hpp>
#include <pollux/embedded/timeout.hpp>
#include <pollux/future/join_array.hpp>
#include <pollux/future/map.hpp>
#include <pollux/future/poll_fn.hpp>
#include <pollux/sync/mutex.hpp>
#include <pollux/sync/notify.hpp>
#include <pollux/sync/oneshot.hpp>
#include <pollux/sync/semaphore.hpp>
#include <pollux/sync/static_channel.hpp>

#if defined(__ARM_ARCH)
#include "board.hpp"
void start_ticks(unsigned hz) noexcept { mps2::start_systick(hz); }
#else
void start_ticks(unsigned hz) noexcept;
#endif

using namespace std::chrono_literals;

namespace {

constinit pollux::TickTimer timer(1000);
int failures = 0;

void check(bool ok, std::string_view what) {
  pollux::board::write(ok ? "ok   " : "FAIL ");
  pollux::board::write(what);
  pollux::board::write("\n");
  if (!ok) ++failures;
}

// Sleeps `ticks` ticks, then appends `name` to the order.
char order[8];
int finished = 0;
class SleepThenNote {
 public:
  using Output = void;
  SleepThenNote(char name, std::chrono::milliseconds d) : name_(name), sleep_(pollux::sleep(d)) {}
  pollux::Poll<void> poll(pollux::Context& cx) {
    if (sleep_.poll(cx).is_pending()) return pollux::pending;
    order[finished++] = name_;
    return pollux::ready();
  }

 private:
  char name_;
  pollux::TickSleep sleep_;
};

void a_static_task_holds_one_task_at_a_time() {
  static constinit pollux::StaticTask<SleepThenNote> storage;
  pollux::SingleCoreExecutor executor;
  finished = 0;
  check(executor.spawn(storage, SleepThenNote('a', 1ms)), "a free StaticTask takes a spawn");
  check(!executor.spawn(storage, SleepThenNote('b', 1ms)), "a StaticTask in use refuses a second spawn");
  executor.run();
  check(!storage.in_use() && finished == 1, "its storage is free once the task completed");
  check(executor.spawn(storage, SleepThenNote('c', 1ms)), "and takes the next spawn");
  executor.run();
}

void a_full_task_pool_refuses_a_spawn() {
  static constinit pollux::TaskPool<SleepThenNote, 2> pool;
  pollux::SingleCoreExecutor executor;
  finished = 0;
  bool first = executor.spawn(pool, SleepThenNote('a', 2ms));
  bool second = executor.spawn(pool, SleepThenNote('b', 1ms));
  check(first && second && pool.in_use() == 2, "a TaskPool of 2 takes 2 spawns");
  check(!executor.spawn(pool, SleepThenNote('c', 1ms)), "and refuses the third with false");
  executor.run();
  check(pool.in_use() == 0 && finished == 2, "its slots are free once their tasks completed");
}

void sleeps_end_in_deadline_order() {
  static constinit pollux::TaskPool<SleepThenNote, 3> pool;
  pollux::SingleCoreExecutor executor;
  finished = 0;
  bool spawned = executor.spawn(pool, SleepThenNote('3', 30ms)) && executor.spawn(pool, SleepThenNote('1', 10ms))
                 && executor.spawn(pool, SleepThenNote('2', 20ms));
  executor.run();
  check(spawned && finished == 3 && order[0] == '1' && order[1] == '2' && order[2] == '3',
        "three sleeps end in the order of their deadlines");
}

void a_sleep_dropped_early_leaves_the_queue() {
  pollux::SingleCoreExecutor executor;
  static std::optional<pollux::TickSleep> dropped;
  static constinit pollux::StaticTask<SleepThenNote> waiter;
  dropped.emplace(pollux::sleep(5ms));
  // A task polls the sleep once (so it is queued), then drops it.
  struct PollOnceThenDrop {
    using Output = void;
    pollux::Poll<void> poll(pollux::Context& cx) {
      (void)dropped->poll(cx);
      dropped.reset();
      return pollux::ready();
    }
  };
  static constinit pollux::StaticTask<PollOnceThenDrop> dropper;
  bool spawned = executor.spawn(dropper, PollOnceThenDrop{}) && executor.spawn(waiter, SleepThenNote('w', 10ms));
  finished = 0;
  executor.run();  // the dropped sleep's deadline passes while the waiter sleeps
  check(spawned && finished == 1 && !dropped, "a sleep destroyed before its deadline leaves the timer's queue");
}

void timeout_says_which_came_first() {
  static constinit pollux::StaticTask<pollux::TickTimeout<pollux::TickSleep>> task;
  pollux::SingleCoreExecutor executor;
  std::uint64_t start = timer.now();
  bool spawned = executor.spawn(task, pollux::timeout(5ms, pollux::sleep(1000ms)));
  executor.run();
  check(spawned && timer.now() - start < 100, "a timeout ends its future at the deadline, not the future's");
}

// A task that waits on an AtomicWaker is woken by a wake from elsewhere
// (here a sibling task after a sleep; in irq_channel, an interrupt).
pollux::AtomicWaker signal;
bool signalled = false;
int woken = 0;
void an_atomic_waker_wakes_the_task_that_registered() {
  struct Waiter {
    using Output = void;
    pollux::Poll<void> poll(pollux::Context& cx) {
      signal.register_waker(cx.waker());
      if (!signalled) return pollux::pending;
      ++woken;
      return pollux::ready();
    }
  };
  struct Signaller {
    using Output = void;
    pollux::TickSleep sleep = pollux::sleep(3ms);
    pollux::Poll<void> poll(pollux::Context& cx) {
      if (sleep.poll(cx).is_pending()) return pollux::pending;
      signalled = true;
      signal.wake_by_ref();
      return pollux::ready();
    }
  };
  static constinit pollux::StaticTask<Waiter> waiter;
  static constinit pollux::StaticTask<Signaller> signaller;
  pollux::SingleCoreExecutor executor;
  bool spawned = executor.spawn(waiter, Waiter{}) && executor.spawn(signaller, Signaller{});
  executor.run();
  check(spawned && woken == 1, "an AtomicWaker wakes the task that registered");
}

// A task waiting on a Notify is woken by notify_one from elsewhere.
pollux::Notify notify;
int notified = 0;
void a_notify_wakes_the_task_that_waits_on_it() {
  struct Waiter {
    using Output = void;
    std::optional<pollux::Notify::Notified> wait;
    pollux::Poll<void> poll(pollux::Context& cx) {
      if (!wait) wait.emplace(notify.notified());
      if (wait->poll(cx).is_pending()) return pollux::pending;
      ++notified;
      return pollux::ready();
    }
  };
  struct Notifier {
    using Output = void;
    pollux::TickSleep sleep = pollux::sleep(3ms);
    pollux::Poll<void> poll(pollux::Context& cx) {
      if (sleep.poll(cx).is_pending()) return pollux::pending;
      notify.notify_one();
      return pollux::ready();
    }
  };
  static constinit pollux::StaticTask<Waiter> waiter;
  static constinit pollux::StaticTask<Notifier> notifier;
  pollux::SingleCoreExecutor executor;
  bool spawned = executor.spawn(waiter, Waiter{}) && executor.spawn(notifier, Notifier{});
  executor.run();
  check(spawned && notified == 1, "a Notify wakes the task that waits on it");
}

// A producer task sends 10 values into a 2-slot StaticChannel, waiting for
// room; the consumer task receives them all, in order.
pollux::StaticChannel<int, 2> channel;
int channel_sum = 0;
int channel_order_errors = 0;
void a_static_channel_makes_a_sender_wait_for_room() {
  struct Producer {
    using Output = void;
    int next = 1;
    std::optional<pollux::StaticChannel<int, 2>::Send> send;
    pollux::Poll<void> poll(pollux::Context& cx) {
      while (next <= 10) {
        if (!send) send.emplace(channel.send(next));
        if (send->poll(cx).is_pending()) return pollux::pending;
        send.reset();
        ++next;
      }
      return pollux::ready();
    }
  };
  struct Consumer {
    using Output = void;
    int expected = 1;
    std::optional<pollux::StaticChannel<int, 2>::Recv> recv;
    pollux::Poll<void> poll(pollux::Context& cx) {
      while (expected <= 10) {
        if (!recv) recv.emplace(channel.recv());
        auto value = recv->poll(cx);
        if (value.is_pending()) return pollux::pending;
        recv.reset();
        if (*value.value() != expected) ++channel_order_errors;
        channel_sum += *value.value();
        ++expected;
      }
      return pollux::ready();
    }
  };
  static constinit pollux::StaticTask<Producer> producer;
  static constinit pollux::StaticTask<Consumer> consumer;
  pollux::SingleCoreExecutor executor;
  bool spawned = executor.spawn(producer, Producer{}) && executor.spawn(consumer, Consumer{});
  executor.run();
  check(spawned && channel_sum == 55 && channel_order_errors == 0,
        "a StaticChannel of 2 slots carries 10 values in order, its sender waiting for room");
}

// An interval's ticks come one period apart, counted from the first, not
// from when the consumer got to them (a consumer that sleeps 15 ms after
// the second tick of a 10 ms interval gets the missed third at once).
void an_interval_ticks_a_period_apart_without_drift() {
  struct Ticks {
    pollux::TickInterval interval = pollux::interval(10ms);
    std::optional<pollux::TickSleep> pause;
    std::uint64_t due[5] = {};
    int count = 0;
    pollux::Poll<void> poll(pollux::Context& cx) {
      while (count < 5) {
        if (pause) {
          if (pause->poll(cx).is_pending()) return pollux::pending;
          pause.reset();
        }
        auto tick = interval.poll_tick(cx);
        if (tick.is_pending()) return pollux::pending;
        due[count++] = tick.value();
        if (count == 2) pause.emplace(pollux::sleep(15ms));
      }
      return pollux::ready();
    }
  };
  static std::uint64_t due[5];
  struct Copy {  // the future is gone once the task ends: keep its figures
    using Output = void;
    Ticks ticks;
    pollux::Poll<void> poll(pollux::Context& cx) {
      if (ticks.poll(cx).is_pending()) return pollux::pending;
      for (int i = 0; i < 5; ++i) due[i] = ticks.due[i];
      return pollux::ready();
    }
  };
  static constinit pollux::StaticTask<Copy> copy;
  pollux::SingleCoreExecutor executor;
  bool spawned = executor.spawn(copy, Copy{});
  executor.run();
  bool apart = true;
  for (int i = 1; i < 5; ++i) apart = apart && due[i] == due[0] + 10 * static_cast<std::uint64_t>(i);
  check(spawned && apart, "an interval's ticks are one period apart, a late consumer getting the missed one at once");
}

// Fills every slot of `pool` with a future from `make()` and runs them all
// to completion; true when every spawn was taken.
template <class F, std::size_t N, class Make>
bool run_in_pool(pollux::TaskPool<F, N>& pool, Make make) {
  pollux::SingleCoreExecutor executor;
  bool spawned = true;
  for (std::size_t i = 0; i < N; ++i) spawned = executor.spawn(pool, make()) && spawned;
  executor.run();
  return spawned;
}

// Three tasks lock a Mutex<int> and hold it across a sleep: none finds
// another inside, and the value counts all three.
struct MutexRoom {
  pollux::Mutex<int> mutex{0};
  int inside = 0;
  int overlaps = 0;
};
void a_mutex_lets_one_task_in_at_a_time() {
  struct Locker {
    using Output = void;
    MutexRoom* room;
    std::optional<pollux::Mutex<int>::Lock> lock;
    std::optional<pollux::MutexGuard<int>> guard;
    std::optional<pollux::TickSleep> hold;
    pollux::Poll<void> poll(pollux::Context& cx) {
      if (!guard) {
        if (!lock) lock.emplace(room->mutex.lock());
        auto got = lock->poll(cx);
        if (got.is_pending()) return pollux::pending;
        guard.emplace(std::move(got.value()));
        lock.reset();
        if (++room->inside > 1) ++room->overlaps;
        hold.emplace(pollux::sleep(2ms));
      }
      if (hold->poll(cx).is_pending()) return pollux::pending;
      **guard += 1;
      --room->inside;
      guard.reset();  // unlocks: the next waiter is woken
      return pollux::ready();
    }
  };
  MutexRoom room;
  static constinit pollux::TaskPool<Locker, 3> pool;
  bool spawned = run_in_pool(pool, [&] { return Locker{&room, {}, {}, {}}; });
  check(spawned && room.overlaps == 0 && room.mutex.get_mut() == 3,
        "a Mutex lets one task in at a time, the others waiting for its guard");
}

// Four tasks take a permit each from a Semaphore of 2 and hold it across a
// sleep: two at most are inside at once, and all four get their turn.
struct SemaphoreRoom {
  pollux::Semaphore semaphore{2};
  int inside = 0;
  int most_inside = 0;
  int served = 0;
};
void a_semaphore_of_two_lets_two_tasks_in_at_once() {
  struct Taker {
    using Output = void;
    SemaphoreRoom* room;
    std::optional<pollux::Semaphore::Acquire> acquire;
    std::optional<pollux::SemaphorePermit> permit;
    std::optional<pollux::TickSleep> hold;
    pollux::Poll<void> poll(pollux::Context& cx) {
      if (!permit) {
        if (!acquire) acquire.emplace(room->semaphore.acquire());
        auto got = acquire->poll(cx);
        if (got.is_pending()) return pollux::pending;
        if (!got.value().has_value()) return pollux::ready();  // closed: never here
        permit.emplace(std::move(got.value()).value());
        acquire.reset();
        if (++room->inside > room->most_inside) room->most_inside = room->inside;
        hold.emplace(pollux::sleep(2ms));
      }
      if (hold->poll(cx).is_pending()) return pollux::pending;
      --room->inside;
      ++room->served;
      permit.reset();  // gives the permit back to the next waiter
      return pollux::ready();
    }
  };
  SemaphoreRoom room;
  static constinit pollux::TaskPool<Taker, 4> pool;
  bool spawned = run_in_pool(pool, [&] { return Taker{&room, {}, {}, {}}; });
  check(spawned && room.most_inside == 2 && room.served == 4 && room.semaphore.available_permits() == 2,
        "a Semaphore of 2 lets two tasks in at once, and every permit comes back");
}

// join_all over a std::array of three sleeps: Ready once the longest one
// is, with the outputs in input order.
std::uint64_t joined_at = 0;
int joined_sum = 0;
auto three_sleeps() {
  auto value = [](int v) { return [v] { return v; }; };  // one closure type for the three
  return pollux::join_all(std::array{pollux::map(pollux::sleep(3ms), value(1)),
                                     pollux::map(pollux::sleep(1ms), value(2)),
                                     pollux::map(pollux::sleep(2ms), value(3))});
}
void join_all_over_an_array_waits_for_every_future() {
  struct Joined {
    using Output = void;
    std::uint64_t start = timer.now();
    decltype(three_sleeps()) joined = three_sleeps();
    pollux::Poll<void> poll(pollux::Context& cx) {
      auto outputs = joined.poll(cx);
      if (outputs.is_pending()) return pollux::pending;
      joined_at = timer.now() - start;
      joined_sum = outputs.value()[0] * 100 + outputs.value()[1] * 10 + outputs.value()[2];
      return pollux::ready();
    }
  };
  static constinit pollux::StaticTask<Joined> task;
  pollux::SingleCoreExecutor executor;
  bool spawned = executor.spawn(task, Joined{});
  executor.run();
  check(spawned && joined_sum == 123 && joined_at >= 3,
        "join_all over a std::array waits for every future, outputs in order");
}

// A task answers another through a oneshot channel made in a Slot, twice:
// the slot takes the second channel once both sides of the first are gone.
constinit pollux::oneshot::Slot<int> answer_slot;
int answers = 0;
void a_oneshot_slot_carries_one_answer_per_channel() {
  struct Asker {
    using Output = void;
    pollux::oneshot::Slot<int>::Receiver answer;
    pollux::Poll<void> poll(pollux::Context& cx) {
      auto got = answer.poll(cx);
      if (got.is_pending()) return pollux::pending;
      if (got.value().has_value()) answers += got.value().value();
      return pollux::ready();
    }
  };
  struct Answerer {
    using Output = void;
    pollux::oneshot::Slot<int>::Sender reply;
    int value;
    pollux::TickSleep think = pollux::sleep(2ms);
    pollux::Poll<void> poll(pollux::Context& cx) {
      if (think.poll(cx).is_pending()) return pollux::pending;
      (void)reply.send(value);
      return pollux::ready();
    }
  };
  static constinit pollux::StaticTask<Asker> asker;
  static constinit pollux::StaticTask<Answerer> answerer;
  bool made = true;
  bool spawned = true;
  for (int value : {20, 22}) {
    auto channel = answer_slot.channel();
    made = made && channel.has_value() && !answer_slot.channel().has_value();
    if (!channel) break;
    pollux::SingleCoreExecutor executor;
    spawned = executor.spawn(asker, Asker{std::move(channel->second)})
              && executor.spawn(answerer, Answerer{std::move(channel->first), value}) && spawned;
    executor.run();
  }
  check(made && spawned && answers == 42 && !answer_slot.in_use(),
        "a oneshot Slot carries one answer per channel, and is free again once both sides are gone");
}

#if defined(__ARM_ARCH)
// A flood of interrupts: CMSDK timer 0 every 2 us try_sends a counter into
// a 4-slot StaticChannel (dropping what does not fit) faster than the
// consumer takes them, while a second task sleeps 1 ms five times on the
// tick timer. The consumer sees strictly
// rising values, received + dropped accounts for every interrupt, the
// sleeper's sleeps all end, and run() returns once the flood stops. (Only
// on the core: the host build's one interrupt is its tick.)
constexpr std::uint32_t kFlood = 5000;
pollux::StaticChannel<std::uint32_t, 4> flood_channel;
// Work the compiler cannot drop: `n` stores to a volatile.
volatile int spin_sink = 0;
void spin(int n) noexcept {
  for (int i = 0; i < n; ++i) spin_sink = i;
}
volatile std::uint32_t flood_fired = 0;    // written by the handler only
volatile std::uint32_t flood_dropped = 0;  // written by the handler only
std::uint32_t flood_received = 0;
bool flood_rising = true;
int flood_naps = 0;
void on_flood() noexcept {
  if (flood_fired == kFlood) {
    mps2::stop_timer0();
    flood_channel.close();  // the consumer's recv() ends once it drained
    return;
  }
  std::uint32_t value = flood_fired + 1;
  flood_fired = value;
  if (!flood_channel.try_send(value)) flood_dropped = flood_dropped + 1;
}
void an_interrupt_flood_loses_no_wake_and_starves_no_sleep() {
  struct Drain {
    using Output = void;
    std::uint32_t last = 0;
    std::optional<pollux::StaticChannel<std::uint32_t, 4>::Recv> recv;
    pollux::Poll<void> poll(pollux::Context& cx) {
      for (;;) {
        if (!recv) recv.emplace(flood_channel.recv());
        auto value = recv->poll(cx);
        if (value.is_pending()) return pollux::pending;
        recv.reset();
        if (!value.value()) return pollux::ready();  // closed and drained
        if (*value.value() <= last) flood_rising = false;
        last = *value.value();
        ++flood_received;
        spin(2000);  // slower than the interrupts come: the channel fills
      }
    }
  };
  struct Napper {
    using Output = void;
    std::optional<pollux::TickSleep> nap;
    pollux::Poll<void> poll(pollux::Context& cx) {
      while (flood_naps < 5) {
        if (!nap) nap.emplace(pollux::sleep(1ms));
        if (nap->poll(cx).is_pending()) return pollux::pending;
        nap.reset();
        ++flood_naps;
      }
      return pollux::ready();
    }
  };
  static constinit pollux::StaticTask<Drain> drain;
  static constinit pollux::StaticTask<Napper> napper;
  pollux::SingleCoreExecutor executor;
  bool spawned = executor.spawn(drain, Drain{}) && executor.spawn(napper, Napper{});
  mps2::start_timer0(2, on_flood);
  executor.run();
  check(spawned && flood_fired == kFlood && flood_received + flood_dropped == kFlood && flood_rising && flood_naps == 5,
        "an interrupt flood loses no wake, every value received or counted dropped, and starves no sleep");
  pollux::board::write("     (");
  mps2::write_number(flood_received);
  pollux::board::write(" received, ");
  mps2::write_number(flood_dropped);
  pollux::board::write(" dropped)\n");
}
#endif

}  // namespace

int main() {
  timer.start();
  start_ticks(timer.hz());
  a_static_task_holds_one_task_at_a_time();
  a_full_task_pool_refuses_a_spawn();
  sleeps_end_in_deadline_order();
  a_sleep_dropped_early_leaves_the_queue();
  timeout_says_which_came_first();
  an_atomic_waker_wakes_the_task_that_registered();
  a_notify_wakes_the_task_that_waits_on_it();
  a_static_channel_makes_a_sender_wait_for_room();
  an_interval_ticks_a_period_apart_without_drift();
  a_mutex_lets_one_task_in_at_a_time();
  a_semaphore_of_two_lets_two_tasks_in_at_once();
  join_all_over_an_array_waits_for_every_future();
  a_oneshot_slot_carries_one_answer_per_channel();
#if defined(__ARM_ARCH)
  an_interrupt_flood_loses_no_wake_and_starves_no_sleep();
#endif
  pollux::board::write(failures == 0 ? "profile_test: all passed\n" : "profile_test: failures\n");
  return failures;
}
