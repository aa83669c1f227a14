// StreamSocket: a connected stream socket (TCP or Unix) on the backend that
// runs it, decided once: at its first operation, the ring of the thread
// that polls it if that thread's driver has one (the socket moves onto it,
// and its bytes are buffered by the stream, see uring_stream.hpp), else
// the epoll reactor. Every later call goes straight to that backend, on
// any thread. Two first operations racing on two threads decide once, the
// same way. The operations answer in system-call terms (a count, or an
// errno); the socket types above name the operation and the peer in the
// errors they throw. Destroying it cancels what is in flight and closes
// the fd (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/io/detail/io_source.hpp"
#include "pollux/io/interest.hpp"

namespace pollux::detail {

class UringStream;

// The error of an operation on a socket whose driver is gone (no errno has
// this value): the socket types throw NoRuntime for it.
inline constexpr int kDriverGone = 1 << 20;

// Throws for a failed operation of a stream of `type` ("pollux::TcpStream")
// connected to `peer`: NoRuntime when its driver is gone, else the I/O
// error, as "<type>::<operation> <preposition> <peer>". Cold: the path that
// succeeds carries only its call.
[[noreturn, gnu::cold]] void throw_stream_error(int error, const char* type, const char* operation,
                                                const char* preposition, const std::string& peer);

// The count a stream's poll_* returns for `result`: Pending, Ready with the
// count, or `fail(error)`, which throws. Inline, so an operation that
// succeeds costs one branch more than the system call's own.
template <class Fail>
inline Poll<std::size_t> to_count(Poll<SysResult> result, Fail&& fail) {
  if (result.is_pending()) return pending;
  if (result.value().error != 0) [[unlikely]]
    fail(result.value().error);
  return ready(static_cast<std::size_t>(result.value().value));
}

class StreamSocket {
 public:
  StreamSocket() noexcept = default;
  // Takes a connected non-blocking socket; the backend is not chosen yet.
  explicit StreamSocket(IoSource source) noexcept : source_(std::move(source)) {}
  StreamSocket(StreamSocket&& other) noexcept
      : source_(std::move(other.source_)), backend_(other.backend_.exchange(kUndecided, std::memory_order_relaxed)) {}
  StreamSocket& operator=(StreamSocket&& other) noexcept {
    if (this != &other) {
      close();
      source_ = std::move(other.source_);
      backend_.store(other.backend_.exchange(kUndecided, std::memory_order_relaxed), std::memory_order_relaxed);
    }
    return *this;
  }
  ~StreamSocket() { close(); }

  // One receive into `buffer` (with `peek`, the bytes stay queued), one
  // send of `buffers` in order, or a wait for readiness: Ready with the
  // count (0 for a wait) or an error, else Pending with the waker of `cx`
  // kept for that interest. `what` names the operation for NoRuntime.
  // (These two are defined in the library's stream_socket_io.hpp, inline
  // into the socket types' operations.)
  inline Poll<SysResult> poll_read(Context& cx, std::span<std::byte> buffer, const char* what, bool peek = false);
  inline Poll<SysResult> poll_write(Context& cx, std::span<const std::span<const std::byte>> buffers, const char* what);
  Poll<SysResult> poll_ready(Context& cx, Interest interest, const char* what);
  // The same without waiting: EAGAIN when it would have to.
  SysResult try_read(std::span<std::byte> buffer, const char* what);
  SysResult try_write(std::span<const std::span<const std::byte>> buffers, const char* what);
  // Ready once the kernel has every byte written: at once on epoll, once
  // the send buffer is empty on io_uring; or with a failed send's error.
  Poll<SysResult> poll_flush(Context& cx);
  // shutdown(2) with `how` (SHUT_RD, SHUT_WR, SHUT_RDWR); on io_uring the
  // writing direction closes after the bytes buffered before it.
  SysResult shutdown(int how);
  // A future that waited on `interest` went away: drop its waker.
  void abandon(Interest interest) noexcept;

  int fd() const noexcept;
  // Cancels, hands what is buffered to the kernel, and closes the fd.
  void close() noexcept;

 private:
  // backend_: kUndecided until the first operation, then kEpoll or the
  // address of the socket's UringStream. Written once (under a lock, see
  // decide), read on every operation.
  static constexpr std::uintptr_t kUndecided = 0;
  static constexpr std::uintptr_t kEpoll = 1;

  // The socket's ring state, or null on epoll; decides at the first call.
  UringStream* ring() {
    std::uintptr_t backend = backend_.load(std::memory_order_acquire);
    if (backend > kEpoll) return reinterpret_cast<UringStream*>(backend);
    return backend == kEpoll ? nullptr : decide();
  }
  UringStream* ring_if_any() const noexcept {
    std::uintptr_t backend = backend_.load(std::memory_order_acquire);
    return backend > kEpoll ? reinterpret_cast<UringStream*>(backend) : nullptr;
  }
  UringStream* decide();

  IoSource source_;  // the fd while it is on epoll (or undecided)
  Atomic<std::uintptr_t> backend_{kUndecided};
};

}  // namespace pollux::detail
