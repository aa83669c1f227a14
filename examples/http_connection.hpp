// One HTTP/1.1 keep-alive connection, as a hand-written future: it reads
// until request heads are whole, answers every request found in one read
// with one write (pipelining works), and after a 400 closes. What each GET
// gets is the server's `answer(path, out)`: http_hello says hello,
// metrics_exporter serves the runtime's metrics.
#pragma once

#include <span>
#include <string>
#include <system_error>
#include <utility>

#include <pollux/pollux.hpp>

#include "http_request.hpp"

template <class Answer>
class HttpConnection {
 public:
  using Output = void;
  HttpConnection(pollux::TcpStream stream, Answer answer) : stream_(std::move(stream)), answer_(std::move(answer)) {}

  pollux::Poll<void> poll(pollux::Context& cx) {
    try {
      for (;;) {
        switch (state_) {
          case State::Reading: {
            pollux::Poll<std::size_t> got = stream_.poll_read(cx, std::as_writable_bytes(requests_.free_space()));
            if (got.is_pending()) return pollux::pending;
            if (got.value() == 0) return pollux::ready();  // the client closed
            answer(got.value());
            break;
          }
          case State::Writing: {
            auto rest = std::as_bytes(std::span<const char>(out_)).subspan(written_);
            pollux::Poll<std::size_t> put = stream_.poll_write(cx, rest);
            if (put.is_pending()) return pollux::pending;
            written_ += put.value();
            if (written_ < out_.size()) break;
            out_.clear();
            if (closing_) return pollux::ready();  // after a 400: closing the stream ends the connection
            state_ = State::Reading;
            // A pipelined burst whose answers filled one write: the rest
            // is answered before anything more is read.
            if (requests_.unanswered()) answer(0);
            break;
          }
        }
      }
    } catch (const std::system_error&) {
      return pollux::ready();  // reset by the client and the like
    }
  }

 private:
  enum class State { Reading, Writing };

  // `n` more bytes arrived: answers the whole requests among them.
  void answer(std::size_t n) {
    closing_ = !requests_.received(n, out_, answer_);
    if (out_.empty()) return;  // no whole request yet: read more
    written_ = 0;
    state_ = State::Writing;
  }

  pollux::TcpStream stream_;
  Answer answer_;
  State state_ = State::Reading;
  http::RequestReader requests_;
  std::string out_;
  std::size_t written_ = 0;
  bool closing_ = false;
};
