// The reactor's slab of registrations and its readiness protocol.
//
// Lost wake-ups: a reader that finds its bit clear stores its waker under
// the registration's mutex and looks at the bits again under it; the
// reactor sets bits and takes the wakers under the same mutex. So either
// the reader sees the new bit, or the reactor sees the reader's waker.
// A reader that hit EAGAIN clears its bit only if no event came since it
// read the bits (same tick), so an edge between the two is never erased.
#include "pollux/io/detail/reactor.hpp"

#include <unistd.h>

#include <sys/epoll.h>

#include <bit>
#include <cerrno>
#include <system_error>
#include <utility>
#include <vector>

#include "pollux/io/detail/io_context.hpp"
#include "pollux/core/no_runtime.hpp"

namespace pollux::detail {

namespace {

std::uint16_t bits_from_epoll(std::uint32_t events) noexcept {
  std::uint16_t bits = 0;
  if (events & EPOLLIN) bits |= readiness::kReadable;
  if (events & EPOLLOUT) bits |= readiness::kWritable;
  if (events & EPOLLRDHUP) bits |= readiness::kReadable | readiness::kReadClosed;
  if (events & EPOLLHUP) bits |= readiness::kReadClosed | readiness::kWriteClosed;
  if (events & EPOLLERR) bits |= readiness::kError;
  return bits;
}

}  // namespace

Poll<ReadyEvent> ScheduledIo::poll_ready_or_wait(Context& cx, Interest interest) {
  std::uint16_t mask = readiness::mask_of(interest);
  Waker old;  // dropped after the mutex: dropping a waker may run arbitrary code
  detail::MutexLock lock(mutex_);
  std::uint64_t word = word_.load(std::memory_order_acquire);
  if (bits_of(word) & mask) return ready(ReadyEvent{tick_of(word), static_cast<std::uint16_t>(bits_of(word) & mask)});
  Waker& slot = interest == Interest::Read ? reader_ : writer_;
  if (!slot.will_wake(cx.waker())) old = std::exchange(slot, cx.waker());
  return pending;
}

ReadyEvent ScheduledIo::ready_now(Interest interest) const noexcept {
  std::uint64_t word = word_.load(std::memory_order_acquire);
  return ReadyEvent{tick_of(word), static_cast<std::uint16_t>(bits_of(word) & readiness::mask_of(interest))};
}

void ScheduledIo::clear_readiness(ReadyEvent event) noexcept {
  // Only the edge-triggered bits; closed, error and shutdown stay.
  std::uint64_t clear = event.ready & (readiness::kReadable | readiness::kWritable);
  std::uint64_t word = word_.load(std::memory_order_acquire);
  while (tick_of(word) == event.tick && (word & clear) != 0) {
    if (word_.compare_exchange_weak(word, word & ~clear, std::memory_order_acq_rel, std::memory_order_acquire)) {
      return;
    }
  }
}

void ScheduledIo::abandon(Interest interest) noexcept {
  Waker old;
  detail::MutexLock lock(mutex_);
  old = std::move(interest == Interest::Read ? reader_ : writer_);
}

void ScheduledIo::set_readiness(std::uint32_t generation, std::uint16_t bits) {
  Waker reader, writer;
  {
    detail::MutexLock lock(mutex_);
    std::uint64_t word = word_.load(std::memory_order_acquire);
    for (;;) {
      if (generation_of(word) != generation) return;  // the socket closed; the slot may be someone else's
      std::uint64_t tick = (tick_of(word) + 1) & kTickMask;
      std::uint64_t next = (word & ~(kTickMask << kTickShift)) | (tick << kTickShift) | bits;
      if (word_.compare_exchange_weak(word, next, std::memory_order_acq_rel, std::memory_order_acquire)) break;
    }
    if (bits & readiness::kReadMask) reader = std::move(reader_);
    if (bits & readiness::kWriteMask) writer = std::move(writer_);
  }
  std::move(reader).wake();
  std::move(writer).wake();
}

Reactor::Reactor() : epoll_fd_(epoll_create1(EPOLL_CLOEXEC)) {
  if (epoll_fd_ < 0) throw std::system_error(errno, std::system_category(), "pollux::Driver: epoll_create1");
}

Reactor::~Reactor() { close(epoll_fd_); }

Reactor& require_reactor(const char* what) {
  Reactor* reactor = io_context().reactor;
  if (reactor == nullptr) throw_no_runtime(what);
  return *reactor;
}

ScheduledIo& Reactor::add(int fd, bool start_ready) {
  ScheduledIo* io;
  {
    detail::MutexLock lock(mutex_);
    if (free_ == nullptr) {
      std::uint32_t scaled = next_index_ / kFirstPageSize + 1;
      int page = std::bit_width(scaled) - 1;
      if (page >= kPages) throw std::system_error(EMFILE, std::system_category(), "pollux: reactor is full");
      std::size_t size = std::size_t{kFirstPageSize} << page;
      owned_pages_[static_cast<std::size_t>(page)] = std::make_unique<ScheduledIo[]>(size);
      ScheduledIo* slots = owned_pages_[static_cast<std::size_t>(page)].get();
      for (std::size_t i = size; i-- > 0;) {
        slots[i].index_ = next_index_ + static_cast<std::uint32_t>(i);
        slots[i].next_free_.get(mutex_) = free_;
        free_ = &slots[i];
      }
      pages_[static_cast<std::size_t>(page)].store(slots, std::memory_order_release);
      next_index_ += static_cast<std::uint32_t>(size);
    }
    io = std::exchange(free_, free_->next_free_.get(mutex_));
    io->in_use_.get(mutex_) = true;
  }
  std::uint64_t word = io->word_.load(std::memory_order_relaxed);
  std::uint64_t generation = ScheduledIo::generation_of(word);
  std::uint64_t bits = start_ready ? readiness::kReadable | readiness::kWritable : 0;
  if (shut_down_.load(std::memory_order_acquire)) bits |= readiness::kShutdown;
  io->word_.store((generation << ScheduledIo::kGenerationShift) | bits, std::memory_order_release);

  epoll_event event{};
  event.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  event.data.u64 = (generation << 32) | io->index_;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) < 0) {
    int error = errno;
    detail::MutexLock lock(mutex_);
    io->in_use_.get(mutex_) = false;
    io->next_free_.get(mutex_) = std::exchange(free_, io);
    throw std::system_error(error, std::system_category(), "pollux: epoll_ctl(ADD)");
  }
  registered_.fetch_add(1, std::memory_order_relaxed);
  return *io;
}

void Reactor::remove(ScheduledIo& io, int fd) noexcept {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);  // cannot fail: fd is registered, epoll is open
  Waker reader, writer;
  {
    // A new generation: events still in flight for the old one are dropped.
    detail::MutexLock lock(io.mutex_);
    std::uint64_t generation =
        (ScheduledIo::generation_of(io.word_.load(std::memory_order_relaxed)) + 1) & ScheduledIo::kGenerationMask;
    io.word_.store(generation << ScheduledIo::kGenerationShift, std::memory_order_release);
    reader = std::move(io.reader_);
    writer = std::move(io.writer_);
  }
  {
    detail::MutexLock lock(mutex_);
    io.in_use_.get(mutex_) = false;
    io.next_free_.get(mutex_) = std::exchange(free_, &io);
  }
  registered_.fetch_sub(1, std::memory_order_relaxed);
}

void Reactor::dispatch(std::uint64_t token, std::uint32_t events) {
  auto index = static_cast<std::uint32_t>(token);
  auto generation = static_cast<std::uint32_t>(token >> 32);
  slot(index).set_readiness(generation, bits_from_epoll(events));
}

void Reactor::shut_down() noexcept {
  std::vector<ScheduledIo*> live;
  {
    detail::MutexLock lock(mutex_);
    shut_down_.store(true, std::memory_order_release);
    for (std::uint32_t i = 0; i < next_index_; ++i) {
      ScheduledIo& io = slot(i);
      if (io.in_use_.get(mutex_)) {
        try {
          live.push_back(&io);
        } catch (...) {
          // Out of memory: this socket learns of the shutdown when polled.
        }
      }
    }
  }
  for (ScheduledIo* io : live) {
    std::uint32_t generation = ScheduledIo::generation_of(io->word_.load(std::memory_order_acquire));
    try {
      io->set_readiness(generation, readiness::kShutdown);
    } catch (...) {
      // Its lock failed (the system is out of resources): this socket
      // learns of the shutdown when it is next polled; the others are told.
    }
  }
}

}  // namespace pollux::detail
