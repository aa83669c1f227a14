// One HTTP/1.1 keep-alive connection, as a hand-written future: it reads
// until request heads are whole, answers every request found in one read
// with one write (pipelining works), and after a 400 closes. What each GET
// gets is the server's `answer(path, out)`: http_hello says hello,
// metrics_exporter serves the runtime's metrics. A request head must be
// whole within `limit` of its first byte, and a write may wait at most
// `limit` for the client to read (pollux::Deadline): a client that drips
// its headers a byte at a time, or never reads, is cut off.
#pragma once

#include <span>
#include <string>
#include <system_error>
#include <utility>

#include <pollux/pollux.hpp>

#include "http_request.hpp"

template <class Answer, class Stream = pollux::TcpStream>
class HttpConnection {
 public:
  using Output = void;
  HttpConnection(Stream stream, Answer answer, pollux::Duration limit)
      : stream_(std::move(stream)), answer_(std::move(answer)), read_deadline_(limit), write_deadline_(limit) {}

  pollux::Poll<void> poll(pollux::Context& cx) {
    try {
      for (;;) {
        switch (state_) {
          case State::Reading: {
            pollux::Poll<std::size_t> got = stream_.poll_read(cx, std::as_writable_bytes(requests_.free_space()));
            if (got.is_pending()) {
              if (!requests_.partial()) return pollux::pending;  // between requests: the idle limit's business
              read_deadline_.start();                            // a head begun: it has until the deadline
              return read_deadline_.poll_expired(cx).is_ready() ? pollux::ready() : pollux::pending;
            }
            if (got.value() == 0) {  // the client closed: so do we
              state_ = State::Closing;
              break;
            }
            answer(got.value());
            break;
          }
          case State::Writing: {
            auto rest = std::as_bytes(std::span<const char>(out_)).subspan(written_);
            pollux::Poll<std::size_t> put = stream_.poll_write(cx, rest);
            if (put.is_pending()) {
              write_deadline_.start();
              return write_deadline_.poll_expired(cx).is_ready() ? pollux::ready() : pollux::pending;
            }
            written_ += put.value();
            if (written_ < out_.size()) break;
            write_deadline_.stop();
            out_.clear();
            if (closing_) {  // after a 400: the answer goes out, then the stream closes
              state_ = State::Closing;
              break;
            }
            state_ = State::Reading;
            // A pipelined burst whose answers filled one write: the rest
            // is answered before anything more is read.
            if (requests_.unanswered()) answer(0);
            break;
          }
          case State::Closing: {
            // Our side ends too: a FIN, and over TLS a close_notify first,
            // which waits on the client no longer than a write may.
            if (stream_.poll_shutdown(cx).is_ready()) return pollux::ready();
            write_deadline_.start();
            return write_deadline_.poll_expired(cx).is_ready() ? pollux::ready() : pollux::pending;
          }
        }
      }
    } catch (const std::system_error&) {
      return pollux::ready();  // reset by the client and the like
    }
  }

 private:
  enum class State { Reading, Writing, Closing };

  // `n` more bytes arrived: answers the whole requests among them.
  void answer(std::size_t n) {
    closing_ = !requests_.received(n, out_, answer_);
    if (out_.empty()) return;  // no whole request yet: read more
    read_deadline_.stop();     // requests were whole: the next one's time starts with its first byte
    written_ = 0;
    state_ = State::Writing;
  }

  Stream stream_;
  Answer answer_;
  State state_ = State::Reading;
  http::RequestReader requests_;
  std::string out_;
  std::size_t written_ = 0;
  bool closing_ = false;
  pollux::Deadline read_deadline_;   // runs while a request head is begun and not whole
  pollux::Deadline write_deadline_;  // runs while a write waits for the client
};
