// Registering, deregistering and closing a socket's fd.
#include "pollux/io/io_source.hpp"

#include <unistd.h>

#include <system_error>

namespace pollux::detail {

void throw_io_error(int error, const std::string& what) {
  throw std::system_error(error, std::system_category(), what);
}

void IoSource::register_now(const char* what) {
  DriverCore& driver = require_driver(what);
  io_ = &driver.reactor().add(fd_);
  driver_ = Arc<DriverCore>(&driver);
}

void IoSource::close() noexcept {
  if (fd_ < 0) return;
  if (io_ != nullptr) driver_->reactor().remove(*io_, fd_);
  io_ = nullptr;
  driver_.reset();
  ::close(std::exchange(fd_, -1));
}

void IoSource::throw_driver_gone(const char* what) {
  throw NoRuntime(std::string(what) + ": the driver it was registered with was destroyed");
}

}  // namespace pollux::detail
