// TimerWheel: a hierarchical timing wheel, as in tokio and the Linux kernel.
// Eight levels of 64 slots; a slot of level L spans 64^L milliseconds, so
// the wheel covers 2^48 ms (about 8,900 years) and every steady_clock
// deadline fits without an overflow list. An entry goes to the level of the
// highest 6-bit digit in which its tick differs from the wheel's current
// tick; as time passes, a slot that comes due is emptied and its entries
// move down ("cascade") until they reach level 0 and expire.
//
// Precision beyond the millisecond: entries whose tick has come but whose
// exact deadline has not wait in `due_`, sorted by deadline, and
// next_deadline() names the exact earliest deadline there or in the next
// level-0 slot, so a driver can sleep until exactly then.
//
// Entries armed with a delay rather than a deadline (timeout(d, f)) wait
// unresolved until the wheel next learns the time (resolve, advance): their
// deadline is then that time plus the delay. A timeout that is cancelled
// before then, the common case, never costs a clock read.
//
// Not thread-safe: its TimerQueue calls it under the queue's lock. Insert and remove
// are O(1) (a slot's bitmap finds the next occupied slot in O(levels)).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <array>
#include <cstdint>
#include <optional>

#include "pollux/core/detail/intrusive_list.hpp"
#include "pollux/time/detail/timer_entry.hpp"

namespace pollux::detail {

class TimerWheel {
 public:
  static constexpr int kLevels = 8;
  static constexpr int kSlots = 64;
  static constexpr int kSlotBits = 6;
  static constexpr std::int64_t kTickNs = 1'000'000;  // 1 ms
  static constexpr std::uint64_t kMaxTick = (std::uint64_t{1} << (kLevels * kSlotBits)) - 1;

  // `origin_ns`: the time of tick 0.
  explicit TimerWheel(std::int64_t origin_ns) noexcept : origin_ns_(origin_ns), last_now_ns_(origin_ns) {}
  TimerWheel(const TimerWheel&) = delete;
  TimerWheel& operator=(const TimerWheel&) = delete;

  // Links `entry` by its deadline_ns. An entry whose tick has already come
  // waits in the due list; one whose deadline has passed expires at the
  // next advance().
  void insert(TimerEntry& entry) noexcept;

  // Links `entry` armed with a delay (its delay_ns), to be counted from
  // the next resolve() or advance().
  void insert_unresolved(TimerEntry& entry) noexcept;

  // Unlinks a linked entry.
  void remove(TimerEntry& entry) noexcept;

  // Gives every unresolved entry its deadline: now_ns plus its delay.
  void resolve(std::int64_t now_ns) noexcept;

  // Resolves, then moves the wheel's time to `now_ns`: every entry whose
  // deadline is at or before it moves to the expired list (pop_expired
  // takes them).
  void advance(std::int64_t now_ns) noexcept;

  // Takes the next expired entry, unlinked; nullptr when none is left.
  TimerEntry* pop_expired() noexcept;

  // The earliest deadline still to come, exact where it matters: the exact
  // earliest deadline when the next entries are due within the millisecond
  // or sit in the next level-0 slot; otherwise the start of the next
  // higher-level slot (waking then cascades, and the next answer is
  // finer). For unresolved entries, the earliest they could be due.
  // nullopt when no entry is linked.
  std::optional<std::int64_t> next_deadline() const noexcept;

  /// A list of timer entries, linked through their hooks.
  using List = IntrusiveList<TimerEntry, &TimerEntry::hook>;

  // Unlinks every linked entry from the wheel and hands them all over in
  // one list (for the driver's shutdown, which takes their wakers).
  List drain() noexcept {
    List out;
    auto take_all = [&](List& list) {
      while (!list.empty()) {
        TimerEntry& entry = list.front();
        list.pop_front();
        entry.list = TimerEntry::List::None;
        out.push_back(entry);
      }
    };
    take_all(unresolved_);
    take_all(expired_);
    take_all(due_);
    for (auto& level : levels_) {
      for (List& slot : level.slots) take_all(slot);
      level.occupied = 0;
    }
    return out;
  }

  std::uint64_t tick_of(std::int64_t ns) const noexcept;

 private:
  struct Level {
    std::uint64_t occupied = 0;  // bit s: slots[s] is not empty
    std::array<List, kSlots> slots;
  };

  struct Expiration {
    int level;
    int slot;
    std::uint64_t tick;  // when the slot comes due
  };

  // next_deadline() of the resolved entries.
  std::optional<std::int64_t> next_linked_deadline() const noexcept;
  // The level-L slot that comes due first, looking from the current tick.
  std::optional<Expiration> next_expiration() const noexcept;
  // Links an entry whose tick is after the current tick into its slot.
  void link_in_wheel(TimerEntry& entry) noexcept;
  // Links an entry whose tick has come into due_, keeping it sorted.
  void link_due_sorted(TimerEntry& entry) noexcept;

  std::int64_t origin_ns_;
  std::int64_t last_now_ns_;
  std::uint64_t elapsed_ = 0;  // the current tick: every slot before it has been emptied
  std::array<Level, kLevels> levels_{};
  List due_;         // tick == elapsed_, deadline still to come; sorted by deadline
  List expired_;     // deadline passed, waiting for pop_expired
  List unresolved_;  // entries whose delay_ns counts from the next resolve
};

}  // namespace pollux::detail
