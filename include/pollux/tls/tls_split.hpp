// split(TlsStream): a read half and a write half of one TLS stream, to read
// and write at once from two tasks (on two threads if they like). Both
// halves drive one TLS engine, so a lock takes turns between their polls;
// it is held only inside a poll, never across a Pending, and nothing is
// woken under it. The stream under TLS wakes whichever halves wait on it
// (detail/split_routes.hpp): rule 2 holds for both halves at once.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/io/interest.hpp"
#include "pollux/tls/detail/split_routes.hpp"
#include "pollux/tls/tls_stream.hpp"

namespace pollux::tls {

namespace detail {

/// What the two halves share: the stream, its lock and the wake routes.
template <class S>
class TlsSplitState : public RefCounted<TlsSplitState<S>> {
 public:
  explicit TlsSplitState(TlsStream<S> stream) : stream_(std::move(stream)), routes_(make_arc<SplitRoutes>()) {
    stream_->routes_ = routes_.get();
  }

  /// Runs `op(stream)` for `half`, under the lock.
  template <class Op>
  decltype(auto) with(Half half, Op&& op) {
    pollux::detail::MutexLock lock(mutex_);
    stream_->half_ = half;
    return op(*stream_);
  }

  /// `half`'s future went away: it waits on nothing (rule 5).
  void forget(Half half) noexcept { routes_->forget(half); }

  /// The stream back, unsplit (both halves are given up).
  TlsStream<S> take() {
    pollux::detail::MutexLock lock(mutex_);
    stream_->routes_ = nullptr;
    TlsStream<S> stream = std::move(*stream_);
    stream_.reset();
    return stream;
  }

 private:
  pollux::detail::Mutex mutex_;
  std::optional<TlsStream<S>> stream_ POLLUX_GUARDED_BY(mutex_);
  Arc<SplitRoutes> routes_;  // outlives the stream: S may keep a waker of it
};

}  // namespace detail

template <class S>
class TlsWriteHalf;

/// The reading half of a split TlsStream: an AsyncRead. Movable to
/// another task; the stream lives as long as either half.
template <class S>
class TlsReadHalf {
 public:
  /// What split() makes.
  explicit TlsReadHalf(Arc<detail::TlsSplitState<S>> state) noexcept : state_(std::move(state)) {}

  /// AsyncRead: decrypted bytes, 0 once the peer's close_notify came; as TlsStream::poll_read.
  Poll<std::size_t> poll_read(Context& cx, std::span<std::byte> buffer) {
    return state_->with(detail::Half::Reader, [&](TlsStream<S>& stream) { return stream.poll_read(cx, buffer); });
  }
  /// A read future went away before Ready: this half waits on nothing.
  void abandon(Interest) noexcept { state_->forget(detail::Half::Reader); }

 private:
  template <class T>
  friend TlsStream<T> reunite(TlsReadHalf<T> read, TlsWriteHalf<T> write);
  Arc<detail::TlsSplitState<S>> state_;
};

/// The writing half of a split TlsStream: an AsyncWrite, AsyncFlush and
/// AsyncShutdown. Movable to another task.
template <class S>
class TlsWriteHalf {
 public:
  /// What split() makes.
  explicit TlsWriteHalf(Arc<detail::TlsSplitState<S>> state) noexcept : state_(std::move(state)) {}

  /// AsyncWrite: as TlsStream::poll_write (whole records, nothing half-taken).
  Poll<std::size_t> poll_write(Context& cx, std::span<const std::byte> data) {
    return state_->with(detail::Half::Writer, [&](TlsStream<S>& stream) { return stream.poll_write(cx, data); });
  }
  /// Ready once every byte written so far went to the stream under TLS.
  Poll<void> poll_flush(Context& cx) {
    return state_->with(detail::Half::Writer, [&](TlsStream<S>& stream) { return stream.poll_flush(cx); });
  }
  /// Sends close_notify (once), then ends the write side of the stream under TLS.
  Poll<void> poll_shutdown(Context& cx) {
    return state_->with(detail::Half::Writer, [&](TlsStream<S>& stream) { return stream.poll_shutdown(cx); });
  }
  /// A write, flush or shutdown future went away before Ready: this half waits on nothing.
  void abandon(Interest) noexcept { state_->forget(detail::Half::Writer); }

 private:
  template <class T>
  friend TlsStream<T> reunite(TlsReadHalf<T> read, TlsWriteHalf<T> write);
  Arc<detail::TlsSplitState<S>> state_;
};

/// Splits `stream` into a read half and a write half that two tasks may
/// poll at the same time (one allocation, for what they share).
template <class S>
std::pair<TlsReadHalf<S>, TlsWriteHalf<S>> split(TlsStream<S> stream) {
  auto state = make_arc<detail::TlsSplitState<S>>(std::move(stream));
  return {TlsReadHalf<S>(state), TlsWriteHalf<S>(state)};
}

/// The stream the two halves came from, whole again; std::invalid_argument
/// when they are halves of different streams.
template <class S>
TlsStream<S> reunite(TlsReadHalf<S> read, TlsWriteHalf<S> write) {
  if (read.state_ != write.state_) throw std::invalid_argument("pollux::tls::reunite: halves of different streams");
  return read.state_->take();
}

}  // namespace pollux::tls
