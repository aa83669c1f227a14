// A stream socket on completions: its receive queue, its send buffer, and
// the operations that fill and drain them.
//
// No lost wake-up: a reader or writer that finds nothing to do stores its
// waker under mutex_, and every completion changes the state and takes the
// waker under the same mutex, then wakes it after letting go.
#include "uring_stream.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "pollux/core/detail/concurrency.hpp"
#include "socket_ops.hpp"

namespace pollux::detail {

UringStream* UringStream::open(Ring& ring, int fd) { return new UringStream(ring, fd); }

UringStream::UringStream(Ring& ring, int fd) noexcept : ring_(&ring), fd_(fd) {
  recv_op_.complete = &on_recv;
  recv_op_.stream = this;
  send_op_.complete = &on_send;
  send_op_.stream = this;
}

UringStream::~UringStream() {
  for (unsigned i = 0; i < queued_; ++i) {
    std::uint16_t id = queue_[(queue_head_ + i) % kReadAhead].id;
    if (id != kOwnBuffer) ring_->recycle(id);
  }
  if (fd_ >= 0) ::close(fd_);
}

void UringStream::arm_recv_locked(bool own) {
  if (recv_in_flight_ || read_end_ || read_error_ != 0 || closed_) return;
  if (queued_ == kReadAhead) return;
  if (own) {
    if (own_in_use_) return;
    if (!own_buffer_) own_buffer_ = std::make_unique<std::byte[]>(Ring::kBufferSize);
  }
  add_ref();
  std::byte* into = own ? own_buffer_.get() : nullptr;  // read under our lock, not in the ring's callback
  bool staged = ring_->stage(&recv_op_, [&](io_uring_sqe* sqe) {
    if (own) {
      io_uring_prep_recv(sqe, fd_, into, Ring::kBufferSize, 0);
    } else {
      io_uring_prep_recv(sqe, fd_, nullptr, 0, 0);
      sqe->flags |= IOSQE_BUFFER_SELECT;
      sqe->buf_group = Ring::kBufferGroup;
    }
  });
  if (!staged) {
    release_no_delete();
    read_error_ = kDriverGone;
    return;
  }
  recv_in_flight_ = true;
  recv_into_own_ = own;
  if (own) own_in_use_ = true;
}

void UringStream::on_recv(Completion* self, int result, unsigned flags) {
  UringStream& stream = *static_cast<Op*>(self)->stream;
  Waker reader;
  int unused_buffer = -1;  // recycled after the lock: a recycle is the ring's lock
  {
    detail::MutexLock lock(stream.mutex_);
    stream.recv_in_flight_ = false;
    if (stream.closed_) stream.ring_->withdraw_cancel(self);  // the stream may go once we release it
    // Which buffer the bytes are in: ours, or the ring's (its id in the flags).
    bool own = stream.recv_into_own_;
    std::uint16_t id = own ? kOwnBuffer : static_cast<std::uint16_t>(flags >> IORING_CQE_BUFFER_SHIFT);
    if (result > 0 && !stream.closed_ && (own || (flags & IORING_CQE_F_BUFFER))) {
      stream.queue_[(stream.queue_head_ + stream.queued_) % kReadAhead] =
          Chunk{id, static_cast<std::uint32_t>(result), 0};
      ++stream.queued_;
    } else {
      if (own) stream.own_in_use_ = false;
      if (flags & IORING_CQE_F_BUFFER) unused_buffer = id;
    }
    if (result == 0) {
      stream.read_end_ = true;
    } else if (result == -ENOBUFS) {
      // The ring has no buffer left. With nothing queued, receive into our
      // own; with some, stop reading ahead: the next read arms again.
      if (stream.queued_ == 0) stream.arm_recv_locked(true);
    } else if (result < 0 && result != -ECANCELED && result != -EINTR && result != -EAGAIN) {
      stream.read_error_ = -result;
    }
    if (result > 0 || result == -EINTR || result == -EAGAIN) stream.arm_recv_locked();  // read ahead
    reader = std::move(stream.reader_);
  }
  if (unused_buffer >= 0) stream.ring_->recycle(static_cast<std::uint16_t>(unused_buffer));
  std::move(reader).wake();
  stream.release();
}

Poll<SysResult> UringStream::poll_read(Context* cx, std::span<std::byte> buffer, bool peek) {
  std::uint16_t done[kReadAhead];
  unsigned finished = 0;
  std::size_t copied = 0;
  {
    detail::MutexLock lock(mutex_);
    if (queued_ == 0) {
      if (read_error_ != 0) return ready(SysResult{-1, read_error_});
      if (read_end_) return ready(SysResult{0, 0});
      arm_recv_locked();
      if (read_error_ != 0) return ready(SysResult{-1, read_error_});
      if (cx != nullptr && !reader_.will_wake(cx->waker())) reader_ = cx->waker();
      return pending;
    }
    for (unsigned i = 0; i < queued_ && copied < buffer.size(); ++i) {
      Chunk& chunk = queue_[(queue_head_ + i) % kReadAhead];
      std::size_t n = std::min<std::size_t>(chunk.length - chunk.offset, buffer.size() - copied);
      const std::byte* data = chunk.id == kOwnBuffer ? own_buffer_.get() : ring_->buffer(chunk.id);
      std::memcpy(buffer.data() + copied, data + chunk.offset, n);
      copied += n;
      if (peek) continue;
      chunk.offset += static_cast<std::uint32_t>(n);
      if (chunk.offset == chunk.length) done[finished++] = chunk.id;
    }
    queue_head_ = (queue_head_ + finished) % kReadAhead;
    queued_ -= finished;
    for (unsigned i = 0; i < finished; ++i) {
      if (done[i] == kOwnBuffer) own_in_use_ = false;
    }
    arm_recv_locked();  // room in the queue again: read ahead
  }
  for (unsigned i = 0; i < finished; ++i) {
    if (done[i] != kOwnBuffer) ring_->recycle(done[i]);
  }
  return ready(SysResult{static_cast<ssize_t>(copied), 0});
}

Poll<SysResult> UringStream::poll_read_ready(Context& cx) {
  detail::MutexLock lock(mutex_);
  if (queued_ > 0 || read_end_ || read_error_ != 0) return ready(SysResult{0, read_error_});
  arm_recv_locked();
  if (read_error_ != 0) return ready(SysResult{-1, read_error_});
  if (!reader_.will_wake(cx.waker())) reader_ = cx.waker();
  return pending;
}

SysResult UringStream::try_read(std::span<std::byte> buffer) {
  Poll<SysResult> result = poll_read(nullptr, buffer);
  if (result.is_pending()) return SysResult{-1, EAGAIN};
  return result.value();
}

bool UringStream::has_room_locked() const noexcept {
  if (!send_in_flight_) return send_tail_ - send_head_ < kSendCapacity;
  return send_tail_ < send_capacity_;
}

std::size_t UringStream::buffer_locked(std::span<const std::span<const std::byte>> buffers) {
  std::size_t total = 0;
  for (auto& bytes : buffers) total += bytes.size();
  if (total == 0) return 0;
  // Room at the back; with nothing in the kernel, the front may move and
  // the buffer may grow (the kernel reads it only while a send is in flight).
  if (!send_in_flight_) {
    std::size_t used = send_tail_ - send_head_;
    std::size_t wanted = std::min(kSendCapacity, std::max(kFirstSendCapacity, used + total));
    if (send_capacity_ < wanted) {
      std::size_t capacity = std::max(send_capacity_ * 2, kFirstSendCapacity);
      while (capacity < wanted) capacity *= 2;
      auto grown = std::make_unique<std::byte[]>(capacity);
      if (used > 0) std::memcpy(grown.get(), send_buffer_.get() + send_head_, used);
      send_buffer_ = std::move(grown);
      send_capacity_ = capacity;
    } else if (send_head_ > 0) {
      std::memmove(send_buffer_.get(), send_buffer_.get() + send_head_, used);
    }
    send_head_ = 0;
    send_tail_ = used;
  }
  std::size_t copied = 0;
  for (auto& bytes : buffers) {
    if (bytes.empty()) continue;
    std::size_t n = std::min(bytes.size(), send_capacity_ - send_tail_);
    if (n == 0) break;
    std::memcpy(send_buffer_.get() + send_tail_, bytes.data(), n);
    send_tail_ += n;
    copied += n;
  }
  return copied;
}

void UringStream::arm_send_locked() {
  if (send_in_flight_ || send_head_ == send_tail_ || closed_) return;
  add_ref();
  std::byte* from = send_buffer_.get() + send_head_;  // read under our lock, not in the ring's callback
  std::size_t length = send_tail_ - send_head_;
  bool staged =
      ring_->stage(&send_op_, [&](io_uring_sqe* sqe) { io_uring_prep_send(sqe, fd_, from, length, MSG_NOSIGNAL); });
  if (!staged) {
    release_no_delete();
    write_error_ = kDriverGone;
    send_head_ = send_tail_ = 0;
    return;
  }
  send_in_flight_ = true;
}

Poll<SysResult> UringStream::poll_write(Context* cx, std::span<const std::span<const std::byte>> buffers) {
  detail::MutexLock lock(mutex_);
  if (write_error_ != 0) return ready(SysResult{-1, write_error_});
  if (write_shut_ || shutdown_pending_) return ready(SysResult{-1, EPIPE});
  std::size_t copied = buffer_locked(buffers);
  bool asked = false;
  for (auto& bytes : buffers) asked = asked || !bytes.empty();
  if (copied == 0 && asked) {
    if (cx != nullptr && !writer_.will_wake(cx->waker())) writer_ = cx->waker();
    return pending;
  }
  arm_send_locked();
  if (write_error_ != 0) return ready(SysResult{-1, write_error_});
  return ready(SysResult{static_cast<ssize_t>(copied), 0});
}

Poll<SysResult> UringStream::poll_write_ready(Context& cx) {
  detail::MutexLock lock(mutex_);
  if (write_error_ != 0 || write_shut_ || has_room_locked()) return ready(SysResult{0, write_error_});
  if (!writer_.will_wake(cx.waker())) writer_ = cx.waker();
  return pending;
}

SysResult UringStream::try_write(std::span<const std::span<const std::byte>> buffers) {
  Poll<SysResult> result = poll_write(nullptr, buffers);
  if (result.is_pending()) return SysResult{-1, EAGAIN};
  return result.value();
}

Poll<SysResult> UringStream::poll_flush(Context& cx) {
  detail::MutexLock lock(mutex_);
  if (write_error_ != 0) return ready(SysResult{-1, write_error_});
  if (send_head_ == send_tail_ && !send_in_flight_) return ready(SysResult{0, 0});
  if (!writer_.will_wake(cx.waker())) writer_ = cx.waker();
  return pending;
}

SysResult UringStream::shutdown_write() {
  detail::MutexLock lock(mutex_);
  if (write_shut_ || shutdown_pending_) return SysResult{0, 0};
  if (send_in_flight_ || send_head_ != send_tail_) {
    shutdown_pending_ = true;  // after the last send: on_send
    return SysResult{0, 0};
  }
  write_shut_ = true;
  if (::shutdown(fd_, SHUT_WR) < 0) return SysResult{-1, errno};
  return SysResult{0, 0};
}

void UringStream::on_send(Completion* self, int result, unsigned) {
  UringStream& stream = *static_cast<Op*>(self)->stream;
  Waker writer;
  {
    detail::MutexLock lock(stream.mutex_);
    stream.send_in_flight_ = false;
    if (stream.closed_) stream.ring_->withdraw_cancel(self);  // the stream may go once we release it
    if (result >= 0) {
      stream.send_head_ += static_cast<std::size_t>(result);
    } else if (result != -EINTR && result != -EAGAIN && result != -ECANCELED) {
      stream.write_error_ = -result;
      stream.send_head_ = stream.send_tail_ = 0;
    }
    if (stream.send_head_ == stream.send_tail_) {
      stream.send_head_ = stream.send_tail_ = 0;
      if (stream.send_capacity_ > 16 * 1024) {
        stream.send_buffer_.reset();  // a burst ended: an idle socket keeps a small buffer at most
        stream.send_capacity_ = 0;
      }
    }
    if (stream.closed_) {
      stream.send_rest_locked();
    } else if (result != -ECANCELED) {
      stream.arm_send_locked();
      if (!stream.send_in_flight_ && stream.shutdown_pending_) {
        stream.shutdown_pending_ = false;
        stream.write_shut_ = true;
        ::shutdown(stream.fd_, SHUT_WR);
      }
    }
    writer = std::move(stream.writer_);
  }
  std::move(writer).wake();
  stream.release();
}

void UringStream::send_rest_locked() noexcept {
  while (send_head_ < send_tail_) {
    ssize_t n = sys_send(fd_, send_buffer_.get() + send_head_, send_tail_ - send_head_, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    send_head_ += static_cast<std::size_t>(n);
  }
  send_head_ = send_tail_ = 0;
  if (shutdown_pending_) ::shutdown(fd_, SHUT_WR);
  shutdown_pending_ = false;
}

void UringStream::abandon(Interest interest) noexcept {
  Waker old;  // dropped after the lock: a waker's drop may run anything
  detail::MutexLock lock(mutex_);
  old = std::move(interest == Interest::Read ? reader_ : writer_);
}

void UringStream::close() noexcept {
  Waker reader, writer;
  {
    detail::MutexLock lock(mutex_);
    closed_ = true;
    reader = std::move(reader_);
    writer = std::move(writer_);
    if (recv_in_flight_) ring_->stage_cancel(&recv_op_);
    if (send_in_flight_) {
      ring_->stage_cancel(&send_op_);  // on_send hands the rest to the kernel
    } else {
      send_rest_locked();
    }
  }
  release();
}

}  // namespace pollux::detail
