// UringHandle: where a TcpStream keeps its io_uring state once it runs on
// a ring. A stream starts as a plain fd (an IoSource); its first poll on a
// thread whose driver has a ring moves the fd onto that ring, once, even
// when a reader and a writer poll it for the first time at once on two
// threads. A stream already registered with epoll stays there.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <utility>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/io/detail/io_context.hpp"
#include "pollux/io/detail/io_source.hpp"

namespace pollux::detail {

class UringStream;

class UringHandle {
 public:
  UringHandle() noexcept = default;
  UringHandle(UringHandle&& other) noexcept : stream_(other.stream_.exchange(nullptr, std::memory_order_relaxed)) {}
  UringHandle& operator=(UringHandle&& other) noexcept {
    if (this != &other) {
      close();
      stream_.store(other.stream_.exchange(nullptr, std::memory_order_relaxed), std::memory_order_relaxed);
    }
    return *this;
  }
  ~UringHandle() { close(); }

  // The stream's ring state: null while the stream runs on epoll (no ring
  // on this thread, or registered with epoll already).
  UringStream* attach(IoSource& source) {
    UringStream* stream = stream_.load(std::memory_order_acquire);
    if (stream != nullptr || io_context().ring == nullptr) return stream;
    return attach_slow(source);
  }
  // The ring state if there is one, without attaching.
  UringStream* get() const noexcept { return stream_.load(std::memory_order_acquire); }

  // Lets go of the ring state: what is buffered goes to the kernel, the
  // fd closes once the ring has returned every operation.
  void close() noexcept;

 private:
  UringStream* attach_slow(IoSource& source);

  Atomic<UringStream*> stream_{nullptr};
};

}  // namespace pollux::detail
