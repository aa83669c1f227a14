// UdpFramed<C>: a UDP socket as a Stream of decoded frames, each with the
// address it came from, and a Sink of (item, address) pairs, each sent as
// one datagram (tokio-util's UdpFramed). A datagram is decoded whole: the
// codec sees it as a finished input (decode_eof), so every frame in it is
// yielded, and bytes that make no whole frame are an error item; the
// stream then goes on (with the rest of that datagram, where the codec
// takes it, else the next one), since a bad datagram from one peer must
// not end a socket that serves many. Memory is
// one datagram each way (64 KiB at most to receive).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <optional>
#include <system_error>
#include <utility>

#include "pollux/codec/decoder.hpp"
#include "pollux/codec/encoder.hpp"
#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/result.hpp"
#include "pollux/io/bytes_buf.hpp"
#include "pollux/io/socket_addr.hpp"
#include "pollux/io/udp_socket.hpp"

namespace pollux {

/// A UDP socket read as a Stream of (frame, sender) and written as a Sink
/// of (item, destination), one datagram per item.
template <Decoder C>
class [[nodiscard("streams do nothing unless polled")]] UdpFramed {
 public:
  /// A frame and its sender, or the error of one datagram (the stream goes on).
  using Item = Result<std::pair<decoded_t<C>, SocketAddr>, typename C::Error>;
  /// The codec's error, also for the socket's (as its error_code).
  using Error = typename C::Error;
  /// The largest datagram it receives whole (UDP's limit).
  static constexpr std::size_t kMaxDatagram = 65536;

  /// Frames of `codec` over `socket`.
  UdpFramed(UdpSocket socket, C codec) : socket_(std::move(socket)), codec_(std::move(codec)) {}

  /// Stream: the next frame of the datagram at hand, else of the next
  /// datagram; never ends.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    for (;;) {
      if (in_datagram_) {
        std::size_t before = in_.size();
        auto frame = decode_eof(codec_, in_);
        if (!frame) {
          // The codec may go on past its error in the same datagram (a line
          // too long is skipped to its newline at the next call); a second
          // error that took nothing more would only repeat, so the
          // datagram goes then.
          if (in_.size() == before && before == stuck_at_) {
            end_datagram();
          } else {
            stuck_at_ = in_.size();
          }
          return ready(std::optional<Item>(Item(std::move(frame).error())));
        }
        stuck_at_ = kNotStuck;
        if (frame.value()) return ready(std::optional<Item>(Item(std::pair(std::move(*frame.value()), from_))));
        end_datagram();
      }
      in_.reserve(kMaxDatagram);
      Poll<std::pair<std::size_t, SocketAddr>> got = [&] {
        try {
          return socket_.poll_recv_from(cx, in_.spare().first(kMaxDatagram));
        } catch (const std::system_error& error) {
          failed_ = error.code();
          return Poll<std::pair<std::size_t, SocketAddr>>(std::in_place, 0, SocketAddr());
        }
      }();
      if (got.is_pending()) return pending;
      if (failed_) return ready(std::optional<Item>(Item(Error(std::exchange(failed_, {})))));
      in_.commit(got.value().first);
      from_ = got.value().second;
      in_datagram_ = true;
    }
  }

  /// Sink: room once the datagram before (if any) is sent.
  Poll<Result<void, Error>> poll_ready(Context & cx) { return poll_flush(cx); }
  /// Sink: encodes `item` as the next datagram, to `item.second`.
  template <class I>
  requires Encoder<C, I> Result<void, Error> start_send(std::pair<I, SocketAddr> item) {
    out_.clear();
    to_ = item.second;
    return codec_.encode(std::move(item.first), out_);
  }
  /// Sink: sends the encoded datagram; a datagram the socket cuts short is
  /// an error (std::errc::message_size).
  Poll<Result<void, Error>> poll_flush(Context & cx) {
    if (out_.empty()) return ready(Result<void, Error>());
    try {
      Poll<std::size_t> sent = socket_.poll_send_to(cx, out_.bytes(), to_);
      if (sent.is_pending()) return pending;
      bool whole = sent.value() == out_.size();
      out_.clear();
      if (!whole) return ready(Result<void, Error>(Error(std::make_error_code(std::errc::message_size))));
    } catch (const std::system_error& error) {
      out_.clear();
      return ready(Result<void, Error>(Error(error.code())));
    }
    return ready(Result<void, Error>());
  }
  /// Sink: sends what is encoded; a UDP socket has nothing to close.
  Poll<Result<void, Error>> poll_close(Context & cx) { return poll_flush(cx); }

  /// The socket.
  const UdpSocket& get_ref() const noexcept { return socket_; }
  /// The socket, to change it.
  UdpSocket& get_mut() noexcept { return socket_; }
  /// The codec.
  const C& codec() const noexcept { return codec_; }
  /// The codec, to change it.
  C& codec_mut() noexcept { return codec_; }
  /// The socket back; a datagram not yet sent is dropped.
  UdpSocket into_inner()&& { return std::move(socket_); }

 private:
  void end_datagram() noexcept {
    stuck_at_ = kNotStuck;
    in_.clear();
    in_datagram_ = false;
  }

  UdpSocket socket_;
  C codec_;
  BytesBuf in_;  // the datagram at hand
  SocketAddr from_;
  bool in_datagram_ = false;
  std::error_code failed_;  // the socket's error, as the next item
  static constexpr std::size_t kNotStuck = ~std::size_t{0};
  std::size_t stuck_at_ = kNotStuck;  // the datagram's size left by the codec's last error
  BytesBuf out_;                      // the datagram to send
  SocketAddr to_;
};

}  // namespace pollux
