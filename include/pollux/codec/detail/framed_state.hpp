// The reading and writing machinery that Framed, FramedRead and
// FramedWrite share: decode what is buffered before reading more, turn the
// exceptions of the I/O below into the codec's Error, write the encoded
// bytes out in as few writes as the socket allows, and keep the read and
// write deadlines (an error of std::errc::timed_out when one passes).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <optional>
#include <system_error>
#include <utility>

#include "pollux/codec/decoder.hpp"
#include "pollux/core/context.hpp"
#include "pollux/core/detail/pin_check.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/result.hpp"
#include "pollux/io/async_io.hpp"
#include "pollux/io/bytes_buf.hpp"
#include "pollux/io/io_error.hpp"
#include "pollux/stream/stream.hpp"
#include "pollux/time/deadline.hpp"

namespace pollux::detail {

/// The room a read asks for when the buffer has less.
inline constexpr std::size_t kFrameReadChunk = 4096;
/// poll_ready flushes first once this many encoded bytes wait, unless the
/// sink was given a boundary of its own.
inline constexpr std::size_t kFrameBackpressure = 8192;

/// The read side's state. `readable`: the buffer may hold a frame not yet
/// decoded; `eof`: the stream below ended; `finished`: the stream of frames
/// ended (after the end, or after an error).
struct ReadFrames {
  BytesBuf buffer;
  bool readable = false;
  bool eof = false;
  bool finished = false;
  // set_read_deadline: runs while a frame is begun and not whole.
  std::optional<Deadline> deadline;
};

/// The write side's state: the encoded bytes, and set_write_deadline's
/// deadline, which runs while a flush waits.
struct WriteFrames {
  BytesBuf buffer;
  std::optional<Deadline> deadline;
  std::size_t backpressure_boundary = kFrameBackpressure;
};

/// A read side that starts with `buffer`: bytes that an earlier reader
/// read and did not decode, decoded before anything is read.
inline ReadFrames read_frames_from(BytesBuf buffer) {
  ReadFrames state;
  state.readable = !buffer.empty();
  state.buffer = std::move(buffer);
  return state;
}

/// What a framed sink's poll_ready, poll_flush and poll_close return, with
/// `pin` marked while a flush waits: the future sending through the sink
/// holds its address then, so debug builds stop a move of it (rule 4).
template <class Sink, class R>
Poll<R> pinned_while_pending(PinCheck<Sink>& pin, Poll<R> poll) noexcept {
  if (poll.is_pending()) {
    pin.pin();
  } else {
    pin.unpin();
  }
  return poll;
}

/// The error a passed deadline ends a framed stream or sink with.
template <class Error>
Error timed_out() {
  return Error(std::make_error_code(std::errc::timed_out));
}

/// One poll_next of a framed reader.
template <AsyncRead Io, Decoder D>
Poll<std::optional<Result<decoded_t<D>, typename D::Error>>> poll_next_frame(Io& io, D& decoder, ReadFrames& state,
                                                                             Context& cx) {
  using Item = Result<decoded_t<D>, typename D::Error>;
  auto last = [&state](typename D::Error error) {
    state.finished = true;
    return Poll<std::optional<Item>>(std::in_place, Item(std::move(error)));
  };
  for (;;) {
    if (state.finished) return stream_end;
    if (state.readable) {
      auto frame = state.eof ? pollux::decode_eof(decoder, state.buffer) : decoder.decode(state.buffer);
      if (!frame) return last(std::move(frame).error());
      if (frame.value()) {
        if (state.deadline) state.deadline->stop();  // the next frame's time starts with its first byte
        return Poll<std::optional<Item>>(std::in_place, Item(std::move(*frame.value())));
      }
      if (state.eof) {
        state.finished = true;
        return stream_end;
      }
      state.readable = false;
    }
    if (state.buffer.spare().empty()) state.buffer.reserve(kFrameReadChunk);
    std::size_t got = 0;
    try {
      Poll<std::size_t> read = io.poll_read(cx, state.buffer.spare());
      if (read.is_pending()) {
        if (!state.deadline) return pending;
        if (state.buffer.empty()) {
          state.deadline->stop();  // between frames: no limit but the caller's idle one
          return pending;
        }
        state.deadline->start();  // a frame is begun: it has until its deadline to be whole
        if (state.deadline->poll_expired(cx).is_pending()) return pending;
        return last(timed_out<typename D::Error>());
      }
      got = read.value();
    } catch (const std::system_error& error) {
      return last(typename D::Error(error.code()));
    }
    if (got == 0) state.eof = true;
    state.buffer.commit(got);
    state.readable = true;
  }
}

/// One poll_flush of a framed writer: writes the buffer out, then flushes
/// the writer below when it has a flush of its own. A flush that waits
/// longer than the write deadline fails with timed_out.
template <class Error, AsyncWrite Io>
Poll<Result<void, Error>> poll_flush_frames(Io& io, WriteFrames& out, Context& cx) {
  auto waiting = [&]() -> Poll<Result<void, Error>> {
    if (!out.deadline) return pending;
    out.deadline->start();
    if (out.deadline->poll_expired(cx).is_pending()) return pending;
    out.deadline->stop();
    return ready(Result<void, Error>(timed_out<Error>()));
  };
  auto done = [&](Result<void, Error> result) {
    if (out.deadline) out.deadline->stop();
    return ready(std::move(result));
  };
  try {
    while (!out.buffer.empty()) {
      Poll<std::size_t> wrote = io.poll_write(cx, out.buffer.bytes());
      if (wrote.is_pending()) return waiting();
      if (wrote.value() == 0) return done(Error(make_error_code(io_errc::write_zero)));
      out.buffer.consume(wrote.value());
    }
    if constexpr (AsyncFlush<Io>) {
      if (io.poll_flush(cx).is_pending()) return waiting();
    }
  } catch (const std::system_error& error) {
    return done(Error(error.code()));
  }
  return done(Result<void, Error>());
}

/// One poll_ready: room while fewer than the backpressure boundary's bytes
/// wait, else a flush first.
template <class Error, AsyncWrite Io>
Poll<Result<void, Error>> poll_ready_frames(Io& io, WriteFrames& out, Context& cx) {
  if (out.buffer.size() < out.backpressure_boundary) return ready(Result<void, Error>());
  return poll_flush_frames<Error>(io, out, cx);
}

/// One poll_close: flushes, then shuts the writing direction down when the
/// writer below can.
template <class Error, AsyncWrite Io>
Poll<Result<void, Error>> poll_close_frames(Io& io, WriteFrames& out, Context& cx) {
  Poll<Result<void, Error>> flushed = poll_flush_frames<Error>(io, out, cx);
  if (flushed.is_pending() || !flushed.value()) return flushed;
  if constexpr (AsyncShutdown<Io>) {
    try {
      if (io.poll_shutdown(cx).is_pending()) return pending;
    } catch (const std::system_error& error) {
      return ready(Result<void, Error>(Error(error.code())));
    }
  }
  return ready(Result<void, Error>());
}

}  // namespace pollux::detail
