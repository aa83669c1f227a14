// The wheel on its own: where entries go, when they come due, and that
// every deadline from a millisecond to the clock's end cascades down to
// expire at exactly its time.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include <pollux/time/detail/timer_wheel.hpp>

using pollux::detail::TimerEntry;
using pollux::detail::TimerWheel;

namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kOrigin = 1'000 * kMs;  // the wheel's tick 0

// Advances in steps and records, for each expired entry, the time it came out.
std::vector<std::pair<TimerEntry*, std::int64_t>> expire_until(TimerWheel& wheel, std::int64_t end) {
  std::vector<std::pair<TimerEntry*, std::int64_t>> out;
  for (;;) {
    auto next = wheel.next_deadline();
    if (!next || *next > end) break;
    wheel.advance(*next);
    while (TimerEntry* entry = wheel.pop_expired()) out.emplace_back(entry, *next);
  }
  return out;
}

}  // namespace

TEST_CASE("an empty wheel has no next deadline") {
  TimerWheel wheel(kOrigin);
  CHECK_FALSE(wheel.next_deadline().has_value());
  wheel.advance(kOrigin + 10 * kMs);
  CHECK(wheel.pop_expired() == nullptr);
}

TEST_CASE("an entry expires at its exact deadline, not at its millisecond") {
  TimerWheel wheel(kOrigin);
  TimerEntry entry;
  entry.deadline_ns = kOrigin + 5 * kMs + 300'000;  // 5.3 ms
  wheel.insert(entry);
  CHECK(wheel.next_deadline() == entry.deadline_ns);
  wheel.advance(entry.deadline_ns - 1);
  CHECK(wheel.pop_expired() == nullptr);
  CHECK(wheel.next_deadline() == entry.deadline_ns);  // waiting in the millisecond's due list
  wheel.advance(entry.deadline_ns);
  CHECK(wheel.pop_expired() == &entry);
  CHECK_FALSE(wheel.next_deadline().has_value());
}

TEST_CASE("a removed entry never expires") {
  TimerWheel wheel(kOrigin);
  TimerEntry a, b;
  a.deadline_ns = kOrigin + 100 * kMs;
  b.deadline_ns = kOrigin + 200 * kMs;
  wheel.insert(a);
  wheel.insert(b);
  wheel.remove(a);
  auto fired = expire_until(wheel, kOrigin + 1000 * kMs);
  REQUIRE(fired.size() == 1);
  CHECK(fired[0].first == &b);
}

TEST_CASE("deadlines of a day, a year and the clock's end cascade down and expire exactly on time") {
  TimerWheel wheel(kOrigin);
  const std::int64_t day = 86'400'000 * kMs;
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> deadlines = {kOrigin + 1,
                                         kOrigin + 63 * kMs,
                                         kOrigin + 64 * kMs + 7,
                                         kOrigin + 4095 * kMs,
                                         kOrigin + day + 123,
                                         kOrigin + 365 * day + 456,
                                         max - 1,
                                         max};
  std::vector<TimerEntry> entries(deadlines.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    entries[i].deadline_ns = deadlines[i];
    wheel.insert(entries[i]);
  }
  auto fired = expire_until(wheel, max);
  REQUIRE(fired.size() == entries.size());
  for (std::size_t i = 0; i < fired.size(); ++i) {
    CHECK(fired[i].first == &entries[i]);
    CHECK(fired[i].second == deadlines[i]);
  }
}

TEST_CASE("one jump far ahead expires every entry passed on the way") {
  TimerWheel wheel(kOrigin);
  std::vector<TimerEntry> entries(1000);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    entries[i].deadline_ns = kOrigin + static_cast<std::int64_t>(i * i * 7919) * kMs;
    wheel.insert(entries[i]);
  }
  wheel.advance(kOrigin + std::int64_t{999} * 999 * 7919 * kMs);
  std::size_t n = 0;
  while (wheel.pop_expired() != nullptr) ++n;
  CHECK(n == entries.size());
  CHECK_FALSE(wheel.next_deadline().has_value());
}

TEST_CASE("an entry whose millisecond has already come is due in that millisecond") {
  TimerWheel wheel(kOrigin);
  wheel.advance(kOrigin + 10 * kMs + 100);
  TimerEntry entry;
  entry.deadline_ns = kOrigin + 10 * kMs + 500;
  wheel.insert(entry);
  CHECK(wheel.next_deadline() == entry.deadline_ns);
  wheel.advance(kOrigin + 10 * kMs + 500);
  CHECK(wheel.pop_expired() == &entry);
}

TEST_CASE("drain unlinks every entry wherever it is") {
  TimerWheel wheel(kOrigin);
  TimerEntry soon, later, due;
  soon.deadline_ns = kOrigin + 3 * kMs;
  later.deadline_ns = kOrigin + 100'000 * kMs;
  wheel.insert(soon);
  wheel.insert(later);
  wheel.advance(kOrigin + 3 * kMs);  // soon is expired, not yet popped
  due.deadline_ns = kOrigin + 3 * kMs + 10;
  wheel.insert(due);
  int drained = 0;
  TimerWheel::List entries = wheel.drain();
  while (!entries.empty()) {
    CHECK(entries.front().list == TimerEntry::List::None);
    entries.pop_front();
    ++drained;
  }
  CHECK(drained == 3);
  CHECK_FALSE(wheel.next_deadline().has_value());
  CHECK(wheel.pop_expired() == nullptr);
}
