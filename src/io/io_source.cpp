// Registering, deregistering and closing a socket's fd.
#include "pollux/io/detail/io_source.hpp"

#include <unistd.h>

#include <mutex>
#include <utility>
#include <system_error>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/no_runtime.hpp"

namespace pollux::detail {

void throw_io_error(int error, const std::string& what) {
  throw std::system_error(error, std::system_category(), what);
}

namespace {
// Registration happens once per socket, so one lock for all of them costs
// nothing that matters, and it makes the first polls of two threads agree:
// the second finds the first's registration instead of adding the fd twice.
Mutex registration_mutex;
}  // namespace

ScheduledIo& IoSource::register_once(const char* what) {
  detail::MutexLock lock(registration_mutex);
  if (ScheduledIo* io = io_.load(std::memory_order_relaxed)) return *io;
  Reactor& reactor = require_reactor(what);
  ScheduledIo& io = reactor.add(fd_, start_ready_);
  reactor_ = Arc<Reactor>(&reactor);
  io_.store(&io, std::memory_order_release);
  return io;
}

void IoSource::close() noexcept {
  if (fd_ >= 0) ::close(release());
}

int IoSource::release() noexcept {
  if (ScheduledIo* io = io_.exchange(nullptr, std::memory_order_acq_rel)) reactor_->remove(*io, fd_);
  reactor_.reset();
  return std::exchange(fd_, -1);
}

void IoSource::throw_driver_gone(const char* what) {
  throw NoRuntime(std::string(what) + ": the driver it was registered with was destroyed");
}

}  // namespace pollux::detail
