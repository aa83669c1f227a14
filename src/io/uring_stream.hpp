// UringStream: a connected stream socket on the io_uring backend, behind
// the readiness-shaped API of StreamSocket (TCP and Unix). It keeps a socket buffer of its own in
// each direction, so that no future's memory is ever handed to the kernel:
//
// - Reading: a receive is kept in the kernel (up to kReadAhead buffers
//   ahead), into the ring's provided buffers. What it brings is queued here
//   until a read copies it out; a read future destroyed at any point loses
//   nothing, and the next read gets the bytes. When the ring has no buffer
//   left (every one queued in streams nobody reads), a stream with nothing
//   queued receives into a buffer of its own instead, so no stream waits
//   on another's reader; read-ahead stops until buffers come back.
// - Writing: a write copies its bytes into the send buffer here (up to
//   kSendCapacity) and is done; one send at a time carries the buffer to
//   the kernel. A failed send's error comes with the next write or flush.
//   flush waits until the kernel has every byte.
// - Closing: the receive is cancelled; bytes still in the send buffer are
//   handed to the kernel without waiting (what it has no room for is lost,
//   as with a socket closed while its write waits). The fd closes once
//   the kernel has returned every operation.
//
// Its reference count: the StreamSocket holds one, every operation in the
// kernel another, so the memory an operation names lives until its
// completion is reaped (rule 5).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>

#include "pollux/core/context.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/waker.hpp"
#include "pollux/io/detail/io_source.hpp"
#include "pollux/io/detail/stream_socket.hpp"
#include "ring.hpp"

namespace pollux::detail {

class UringStream {
 public:
  // Receives kept in the kernel ahead of the reader, in buffers.
  static constexpr unsigned kReadAhead = 4;
  // The send buffer's most; it starts small and grows while it is busy.
  static constexpr std::size_t kSendCapacity = 64 * 1024;
  static constexpr std::size_t kFirstSendCapacity = 2 * 1024;

  // Takes `fd` (a connected, non-blocking stream socket) onto `ring`.
  static UringStream* open(Ring& ring, int fd);

  int fd() const noexcept { return fd_; }

  // The AsyncRead side. Results are SysResult: a count, or an errno (a
  // receive's error), or kDriverGone.
  // `cx` null: do not wait (try_read). `peek`: leave the bytes queued.
  Poll<SysResult> poll_read(Context* cx, std::span<std::byte> buffer, bool peek = false);
  Poll<SysResult> poll_read_ready(Context& cx);
  SysResult try_read(std::span<std::byte> buffer);

  // The AsyncWrite side.
  Poll<SysResult> poll_write(Context* cx, std::span<const std::span<const std::byte>> buffers);
  Poll<SysResult> poll_write_ready(Context& cx);
  SysResult try_write(std::span<const std::span<const std::byte>> buffers);
  // Ready (value 0) once the kernel has every byte written, or with the
  // error that stopped it.
  Poll<SysResult> poll_flush(Context& cx);
  // Shuts the writing direction down after what is buffered is sent.
  SysResult shutdown_write();

  // A future that waited on `interest` went away: drop its waker.
  void abandon(Interest interest) noexcept;

  // The StreamSocket lets go: cancel, hand the rest to the kernel, and close
  // once every operation is back. Releases the StreamSocket's reference.
  void close() noexcept;

 private:
  struct Op : Completion {
    UringStream* stream;
  };
  struct Chunk {
    std::uint16_t id;
    std::uint32_t length;
    std::uint32_t offset;
  };

  UringStream(Ring& ring, int fd) noexcept;
  ~UringStream();

  void add_ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  // Gives back a reference that cannot be the last (the caller holds another).
  void release_no_delete() noexcept { refs_.fetch_sub(1, std::memory_order_relaxed); }

  // A chunk in the stream's own buffer, not the ring's.
  static constexpr std::uint16_t kOwnBuffer = 0xffff;

  static void on_recv(Completion* self, int result, unsigned flags);
  static void on_send(Completion* self, int result, unsigned flags);

  // Under mutex_: start a receive if none is in the kernel and the queue
  // has room (into the stream's own buffer with `own`); start a send of
  // what is buffered if none is in the kernel.
  void arm_recv_locked(bool own = false) POLLUX_REQUIRES(mutex_);
  void arm_send_locked() POLLUX_REQUIRES(mutex_);
  // Under mutex_: copies into the send buffer what fits of `buffers`.
  std::size_t buffer_locked(std::span<const std::span<const std::byte>> buffers) POLLUX_REQUIRES(mutex_);
  // Under mutex_: whether a write would take at least one byte now.
  bool has_room_locked() const noexcept POLLUX_REQUIRES(mutex_);
  // Hands what is buffered to the kernel directly (a close's last word).
  void send_rest_locked() noexcept POLLUX_REQUIRES(mutex_);

  Arc<Ring> ring_;
  int fd_;
  Atomic<int> refs_{1};
  Op recv_op_;
  Op send_op_;

  Mutex mutex_;  // guards everything below (the compiler checks it)
  // Reading.
  Chunk queue_[kReadAhead] POLLUX_GUARDED_BY(mutex_);
  unsigned queue_head_ POLLUX_GUARDED_BY(mutex_) = 0;
  unsigned queued_ POLLUX_GUARDED_BY(mutex_) = 0;
  bool recv_in_flight_ POLLUX_GUARDED_BY(mutex_) = false;
  bool recv_into_own_ POLLUX_GUARDED_BY(mutex_) = false;               // the receive in flight is into own_buffer_
  bool own_in_use_ POLLUX_GUARDED_BY(mutex_) = false;                  // own_buffer_ is being received into, or queued
  std::unique_ptr<std::byte[]> own_buffer_ POLLUX_GUARDED_BY(mutex_);  // made at the first ENOBUFS; kept
  bool read_end_ POLLUX_GUARDED_BY(mutex_) = false;
  int read_error_ POLLUX_GUARDED_BY(mutex_) = 0;
  Waker reader_ POLLUX_GUARDED_BY(mutex_);
  // Writing.
  std::unique_ptr<std::byte[]> send_buffer_ POLLUX_GUARDED_BY(mutex_);
  std::size_t send_capacity_ POLLUX_GUARDED_BY(mutex_) = 0;
  std::size_t send_head_ POLLUX_GUARDED_BY(mutex_) = 0;  // [head, tail): buffered, not yet taken by the kernel
  std::size_t send_tail_ POLLUX_GUARDED_BY(mutex_) = 0;
  bool send_in_flight_ POLLUX_GUARDED_BY(mutex_) = false;
  bool shutdown_pending_ POLLUX_GUARDED_BY(mutex_) = false;
  bool write_shut_ POLLUX_GUARDED_BY(mutex_) = false;
  int write_error_ POLLUX_GUARDED_BY(mutex_) = 0;
  Waker writer_ POLLUX_GUARDED_BY(mutex_);
  bool closed_ POLLUX_GUARDED_BY(mutex_) = false;
};

}  // namespace pollux::detail
