// The reactor: turns epoll events into wake-ups. It owns the epoll
// instance; the driver (driver/) waits on it, with its own eventfd and
// timerfd registered beside the sockets, and hands each socket event to
// dispatch(). Every socket registers once, edge-triggered, for reading and
// writing, and gets a ScheduledIo: readiness bits plus one waker slot per
// direction. An operation that hits EAGAIN clears its bit and stores the
// waker of the most recent poll (rule 2); the next edge sets the bit and
// wakes it. Sockets find it through the thread's handle
// (IoThreadContext::reactor) that the driver installs.
//
// ScheduledIos live in a slab the reactor owns and never frees while it
// lives, and every event carries the generation of the registration it was
// meant for. So an event that arrives after its socket closed (and after
// its slot was reused) finds a different generation and is dropped: a
// socket may deregister while another thread sits in epoll_wait with its
// event in hand, and nothing reaches freed memory. A registered socket
// holds the reactor (it is reference-counted), so one that outlives its
// driver still deregisters from an open epoll instance (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "pollux/core/context.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/core/waker.hpp"
#include "pollux/io/interest.hpp"

namespace pollux::detail {

// Readiness bits. The closed and error bits are sticky: EAGAIN never
// clears them, so a reader at EOF or an error is never left waiting.
namespace readiness {
inline constexpr std::uint16_t kReadable = 1u << 0;
inline constexpr std::uint16_t kWritable = 1u << 1;
inline constexpr std::uint16_t kReadClosed = 1u << 2;
inline constexpr std::uint16_t kWriteClosed = 1u << 3;
inline constexpr std::uint16_t kError = 1u << 4;
inline constexpr std::uint16_t kShutdown = 1u << 5;  // the Driver is gone
// The bits that end a wait of each direction.
inline constexpr std::uint16_t kReadMask = kReadable | kReadClosed | kError | kShutdown;
inline constexpr std::uint16_t kWriteMask = kWritable | kWriteClosed | kError | kShutdown;
inline constexpr std::uint16_t mask_of(Interest interest) noexcept {
  return interest == Interest::Read ? kReadMask : kWriteMask;
}
}  // namespace readiness

// What poll_ready saw: the bits of its direction, and the tick (a count of
// events) they were set at, so that clearing them after EAGAIN cannot erase
// an event that came in between.
struct ReadyEvent {
  std::uint32_t tick;
  std::uint16_t ready;
};

class ScheduledIo {
 public:
  // Ready if the direction's bits are set; otherwise stores the waker of
  // this poll in the direction's slot and returns Pending. Inline up to the
  // look at the bits: a ready socket (every read and write that succeeds)
  // costs a load and a test, and only a wait takes the call and the lock.
  Poll<ReadyEvent> poll_ready(Context& cx, Interest interest) {
    std::uint16_t mask = readiness::mask_of(interest);
    std::uint64_t word = word_.load(std::memory_order_acquire);
    if (bits_of(word) & mask) return ready(ReadyEvent{tick_of(word), static_cast<std::uint16_t>(bits_of(word) & mask)});
    return poll_ready_or_wait(cx, interest);
  }

  // The direction's readiness now, without waiting (ready is 0 when none),
  // for a try_read or try_write that must not store a waker.
  ReadyEvent ready_now(Interest interest) const noexcept;

  // After an operation hit EAGAIN: clears the readable or writable bit of
  // `event`, unless a newer event has set it again since.
  void clear_readiness(ReadyEvent event) noexcept;

  // Drops the waker a future stored in the direction's slot, for a future
  // destroyed while it waited (rule 5: it leaves nothing behind).
  void abandon(Interest interest) noexcept;

 private:
  friend class Reactor;

  // word_: generation (bits 40..63), tick (bits 16..39), readiness (0..15).
  static constexpr int kTickShift = 16;
  static constexpr int kGenerationShift = 40;
  static constexpr std::uint64_t kTickMask = (std::uint64_t{1} << 24) - 1;
  static constexpr std::uint64_t kGenerationMask = (std::uint64_t{1} << 24) - 1;

  // poll_ready past its first look: the look again and the wait, under the lock.
  Poll<ReadyEvent> poll_ready_or_wait(Context& cx, Interest interest);

  static std::uint16_t bits_of(std::uint64_t word) noexcept { return static_cast<std::uint16_t>(word); }
  static std::uint32_t tick_of(std::uint64_t word) noexcept {
    return static_cast<std::uint32_t>((word >> kTickShift) & kTickMask);
  }
  static std::uint32_t generation_of(std::uint64_t word) noexcept {
    return static_cast<std::uint32_t>(word >> kGenerationShift);
  }

  // Reactor side, any thread: sets `bits` and wakes the slots they concern,
  // if the registration is still the one of `generation`.
  void set_readiness(std::uint32_t generation, std::uint16_t bits);

  pollux::detail::Atomic<std::uint64_t> word_{0};
  pollux::detail::Mutex mutex_;  // guards the slots, and orders them against set_readiness
  Waker reader_ POLLUX_GUARDED_BY(mutex_);
  Waker writer_ POLLUX_GUARDED_BY(mutex_);
  std::uint32_t index_ = 0;
  // The reactor's free list, under the reactor's mutex.
  pollux::detail::OwnerGuarded<bool> in_use_;
  pollux::detail::OwnerGuarded<ScheduledIo*> next_free_;
};

class Reactor : public RefCounted<Reactor> {
 public:
  // Creates the epoll instance; throws std::system_error if it cannot.
  Reactor();
  // Closes the epoll instance: the last registered socket is gone.
  ~Reactor();
  Reactor(const Reactor&) = delete;
  Reactor& operator=(const Reactor&) = delete;

  // Registers `fd` (edge-triggered, both directions). With `start_ready`
  // (sockets) its readiness starts set, so the first operation is tried at
  // once instead of waiting for the event epoll queues for a socket that is
  // ready already; without it (AsyncFd) it starts empty and that event sets
  // it. Throws
  // std::system_error if epoll refuses it.
  ScheduledIo& add(int fd, bool start_ready = true);
  // Unregisters `fd` (before it is closed) and frees its slot; events
  // still on their way for it are dropped. Any thread, even while the
  // driver waits in epoll on another.
  void remove(ScheduledIo& io, int fd) noexcept;

  // The epoll instance, for the driver to wait on and to register its own
  // fds with, under tokens from kFirstDriverToken up.
  int epoll_fd() const noexcept { return epoll_fd_; }

  // Tokens that are not a registration's (the driver's own fds).
  static constexpr std::uint64_t kFirstDriverToken = ~std::uint64_t{0} - 15;
  static bool is_registration(std::uint64_t token) noexcept { return token < kFirstDriverToken; }

  // Applies one epoll event to its registration and wakes its waiters.
  void dispatch(std::uint64_t token, std::uint32_t events);

  // How many sockets are registered: a busy executor only asks epoll for
  // events when there can be some.
  std::size_t registered() const noexcept { return registered_.load(std::memory_order_relaxed); }

  // The Driver is going: marks every registration shut down and wakes its
  // waiters, whose next poll throws NoRuntime.
  void shut_down() noexcept;

 private:
  // Pages double in size (64, 128, ...), so an index maps to its page with
  // a bit scan, and the pages never move: lookups take no lock.
  static constexpr int kPages = 24;
  static constexpr std::uint32_t kFirstPageSize = 64;

  // Page p holds kFirstPageSize << p slots and starts at kFirstPageSize *
  // (2^p - 1). Inline: every event looks its registration up here.
  ScheduledIo& slot(std::uint32_t index) const noexcept {
    std::uint32_t scaled = index / kFirstPageSize + 1;
    int page = std::bit_width(scaled) - 1;
    std::uint32_t start = kFirstPageSize * ((std::uint32_t{1} << page) - 1);
    return pages_[static_cast<std::size_t>(page)].load(std::memory_order_acquire)[index - start];
  }

  int epoll_fd_;
  pollux::detail::Atomic<std::size_t> registered_{0};
  pollux::detail::Atomic<bool> shut_down_{false};
  pollux::detail::Mutex mutex_;  // guards the free list, page creation and in_use_
  ScheduledIo* free_ POLLUX_GUARDED_BY(mutex_) = nullptr;
  std::uint32_t next_index_ POLLUX_GUARDED_BY(mutex_) = 0;  // slots [0, next_index_) exist
  std::array<pollux::detail::Atomic<ScheduledIo*>, kPages> pages_{};
  std::array<std::unique_ptr<ScheduledIo[]>, kPages> owned_pages_;
};

/// The reactor of the driver installed on this thread; throws NoRuntime
/// naming `what` if there is none.
Reactor& require_reactor(const char* what);

}  // namespace pollux::detail
