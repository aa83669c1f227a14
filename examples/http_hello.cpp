// A minimal HTTP/1.1 keep-alive server: every `GET <path> HTTP/1.x` gets
// 200 and "Hello, world!". One task per connection, a hand-written future
// that reads until a blank line ends a request head, answers every request
// found in one read with one write (pipelining works), and on a request it
// does not understand, or a head over 8 KiB, answers 400 and closes that
// connection; the server keeps serving the others.
//
//   http_hello [addr=127.0.0.1:7000] [ct|mt|N=ct] [max_secs=forever] [idle_secs=60] [grace_secs=5]
//
// Try it with `curl http://127.0.0.1:7000/` or load it with wrk.
#include <pollux/pollux.hpp>

#include <array>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "http_request.hpp"
#include "server.hpp"

namespace {

class HttpConnection {
 public:
  using Output = void;
  explicit HttpConnection(pollux::TcpStream stream) : stream_(std::move(stream)) {}

  pollux::Poll<void> poll(pollux::Context& cx) {
    try {
      for (;;) {
        switch (state_) {
          case State::Reading: {
            pollux::Poll<std::size_t> got = stream_.poll_read(cx, std::as_writable_bytes(requests_.free_space()));
            if (got.is_pending()) return pollux::pending;
            if (got.value() == 0) return pollux::ready();  // the client closed
            closing_ = !requests_.received(got.value(), out_);
            if (out_.empty()) break;  // no whole request yet: read more
            written_ = 0;
            state_ = State::Writing;
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

  pollux::TcpStream stream_;
  State state_ = State::Reading;
  http::RequestReader requests_;
  std::string out_;
  std::size_t written_ = 0;
  bool closing_ = false;
};

}  // namespace

int main(int argc, char** argv) { return serve<HttpConnection>("http_hello", "http://", argc, argv); }
