// The wheel's arithmetic: which slot an entry goes to, which slot comes due
// next, and the cascade that moves entries down as time passes.
#include "pollux/time/detail/timer_wheel.hpp"

#include <bit>
#include <limits>

#include "pollux/time/instant.hpp"

namespace pollux::detail {

std::uint64_t TimerWheel::tick_of(std::int64_t ns) const noexcept {
  if (ns <= origin_ns_) return 0;
  std::uint64_t tick = (static_cast<std::uint64_t>(ns) - static_cast<std::uint64_t>(origin_ns_)) / kTickNs;
  return tick < kMaxTick ? tick : kMaxTick;
}

void TimerWheel::insert(TimerEntry& entry) noexcept {
  entry.tick = tick_of(entry.deadline_ns);
  if (entry.tick <= elapsed_) {
    link_due_sorted(entry);
  } else {
    link_in_wheel(entry);
  }
}

void TimerWheel::insert_unresolved(TimerEntry& entry) noexcept {
  entry.list = TimerEntry::List::Unresolved;
  unresolved_.push_back(entry);
}

void TimerWheel::resolve(std::int64_t now_ns) noexcept {
  if (now_ns > last_now_ns_) last_now_ns_ = now_ns;
  while (!unresolved_.empty()) {
    TimerEntry& entry = unresolved_.front();
    unresolved_.pop_front();
    entry.deadline_ns = saturating_add_ns(last_now_ns_, entry.delay_ns);
    insert(entry);
  }
}

void TimerWheel::link_in_wheel(TimerEntry& entry) noexcept {
  // The highest 6-bit digit in which the entry's tick differs from now
  // picks the level; `| (kSlots - 1)` makes ticks within the current
  // 64 ms land on level 0.
  std::uint64_t masked = (entry.tick ^ elapsed_) | (kSlots - 1);
  int level = (63 - std::countl_zero(masked)) / kSlotBits;
  int slot = static_cast<int>((entry.tick >> (level * kSlotBits)) & (kSlots - 1));
  entry.list = TimerEntry::List::Wheel;
  entry.level = static_cast<std::uint8_t>(level);
  entry.slot = static_cast<std::uint8_t>(slot);
  levels_[level].slots[slot].push_back(entry);
  levels_[level].occupied |= std::uint64_t{1} << slot;
}

void TimerWheel::link_due_sorted(TimerEntry& entry) noexcept {
  entry.list = TimerEntry::List::Due;
  // Usually the latest deadline of the millisecond, so search from the back.
  TimerEntry* after = due_.empty() ? nullptr : &due_.back();
  while (after != nullptr && after->deadline_ns > entry.deadline_ns) after = List::prev(*after);
  due_.insert_after(after, entry);
}

void TimerWheel::remove(TimerEntry& entry) noexcept {
  switch (entry.list) {
    case TimerEntry::List::None:
      return;
    case TimerEntry::List::Due:
      due_.erase(entry);
      return;
    case TimerEntry::List::Expired:
      expired_.erase(entry);
      return;
    case TimerEntry::List::Unresolved:
      unresolved_.erase(entry);
      return;
    case TimerEntry::List::Wheel: {
      Level& level = levels_[entry.level];
      List& slot = level.slots[entry.slot];
      slot.erase(entry);
      if (slot.empty()) level.occupied &= ~(std::uint64_t{1} << entry.slot);
    }
  }
}

std::optional<TimerWheel::Expiration> TimerWheel::next_expiration() const noexcept {
  // Lower levels first: a level's occupied slots all lie within the
  // current slot of the level above, so they come due before any slot of
  // a higher level.
  for (int level = 0; level < kLevels; ++level) {
    std::uint64_t occupied = levels_[level].occupied;
    if (occupied == 0) continue;
    int shift = level * kSlotBits;
    int now_slot = static_cast<int>((elapsed_ >> shift) & (kSlots - 1));
    int slot = (now_slot + std::countr_zero(std::rotr(occupied, now_slot))) & (kSlots - 1);
    std::uint64_t level_range = std::uint64_t{1} << (shift + kSlotBits);
    std::uint64_t tick = (elapsed_ & ~(level_range - 1)) + (static_cast<std::uint64_t>(slot) << shift);
    if (tick <= elapsed_) tick += level_range;  // a slot behind the current one belongs to the next turn
    return Expiration{level, slot, tick};
  }
  return std::nullopt;
}

void TimerWheel::advance(std::int64_t now_ns) noexcept {
  resolve(now_ns);
  std::uint64_t now_tick = tick_of(now_ns);
  bool due_grew = false;
  for (auto expiration = next_expiration(); expiration && expiration->tick <= now_tick;
       expiration = next_expiration()) {
    elapsed_ = expiration->tick;
    Level& level = levels_[expiration->level];
    level.occupied &= ~(std::uint64_t{1} << expiration->slot);
    List& slot = level.slots[expiration->slot];
    while (!slot.empty()) {
      TimerEntry& entry = slot.front();
      slot.pop_front();
      if (entry.tick < now_tick) {
        // Its whole millisecond has passed: expired, whatever its exact
        // deadline. (A backlog takes this path and skips the sort below.)
        entry.list = TimerEntry::List::Expired;
        expired_.push_back(entry);
      } else if (entry.tick <= elapsed_) {
        entry.list = TimerEntry::List::Due;
        due_.push_back(entry);
        due_grew = true;
      } else {
        link_in_wheel(entry);  // cascade to a lower level
      }
    }
  }
  if (now_tick > elapsed_) elapsed_ = now_tick;
  if (due_grew) due_.sort([](const TimerEntry& a, const TimerEntry& b) { return a.deadline_ns < b.deadline_ns; });
  // What is left in due_ has tick == elapsed_ or older; the older ones and
  // those of this millisecond whose deadline has come leave here.
  while (!due_.empty() && due_.front().deadline_ns <= now_ns) {
    TimerEntry& entry = due_.front();
    due_.pop_front();
    entry.list = TimerEntry::List::Expired;
    expired_.push_back(entry);
  }
}

TimerEntry* TimerWheel::pop_expired() noexcept {
  if (expired_.empty()) return nullptr;
  TimerEntry& entry = expired_.front();
  expired_.pop_front();
  entry.list = TimerEntry::List::None;
  return &entry;
}

std::optional<std::int64_t> TimerWheel::next_deadline() const noexcept {
  if (!expired_.empty()) return std::numeric_limits<std::int64_t>::min();
  std::optional<std::int64_t> in_wheel = next_linked_deadline();
  if (unresolved_.empty()) return in_wheel;
  std::int64_t earliest = in_wheel.value_or(std::numeric_limits<std::int64_t>::max());
  for (const TimerEntry& entry : unresolved_) {
    std::int64_t delay = entry.deadline_ns;
    if (delay < earliest - last_now_ns_) earliest = last_now_ns_ + delay;
  }
  return earliest;
}

std::optional<std::int64_t> TimerWheel::next_linked_deadline() const noexcept {
  if (!due_.empty()) return due_.front().deadline_ns;
  auto expiration = next_expiration();
  if (!expiration) return std::nullopt;
  if (expiration->level == 0) {
    std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
    for (const TimerEntry& entry : levels_[0].slots[expiration->slot]) {
      if (entry.deadline_ns < earliest) earliest = entry.deadline_ns;
    }
    return earliest;
  }
  std::uint64_t start = expiration->tick * static_cast<std::uint64_t>(kTickNs);
  std::uint64_t room = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max() - origin_ns_);
  return start >= room ? std::numeric_limits<std::int64_t>::max() : origin_ns_ + static_cast<std::int64_t>(start);
}

}  // namespace pollux::detail
