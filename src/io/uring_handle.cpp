// A TcpStream's move onto its thread's ring, once, and its let-go.
#include "pollux/io/detail/uring_handle.hpp"

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/io/detail/io_context.hpp"
#include "uring_stream.hpp"

namespace pollux::detail {

namespace {
// Attaching happens once per stream, so one lock for all of them costs
// nothing that matters (as IoSource's registration).
Mutex attach_mutex;
}  // namespace

UringStream* UringHandle::attach_slow(IoSource& source) {
  detail::MutexLock lock(attach_mutex);
  if (UringStream* stream = stream_.load(std::memory_order_relaxed)) return stream;
  // Registered with epoll already (a poll on a thread without a ring, or a
  // readiness wait): it stays there, so that no event is lost in a move.
  if (source.is_registered() || source.fd() < 0) return nullptr;
  UringStream* stream = UringStream::open(*io_context().ring, source.fd());
  (void)source.release();
  stream_.store(stream, std::memory_order_release);
  return stream;
}

void UringHandle::close() noexcept {
  if (UringStream* stream = stream_.exchange(nullptr, std::memory_order_acq_rel)) stream->close();
}

}  // namespace pollux::detail
