// A minimal HTTP/1.1 keep-alive server: every `GET <path> HTTP/1.x` gets
// 200 and "Hello, world!". One task per connection, a hand-written future
// that reads until a blank line ends a request head, answers every request
// found in one read with one write (pipelining works), and on a request it
// does not understand, or a head over 8 KiB, answers 400 and closes that
// connection; the server keeps serving the others.
//
//   http_hello [addr=127.0.0.1:7000] [ct|mt|N=ct] [max_secs=forever]
//
// Try it with `curl http://127.0.0.1:7000/` or load it with wrk.
#include <pollux/pollux.hpp>

#include <array>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "server.hpp"

namespace {

constexpr std::string_view kHello =
    "HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, world!";
constexpr std::string_view kBadRequest =
    "HTTP/1.1 400 Bad Request\r\nContent-Length: 11\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
    "Bad Request";
constexpr std::size_t kMaxHead = 8192;  // the longest request head, "\r\n\r\n" included

// `GET <path> HTTP/1.0` or `HTTP/1.1` on the first line of a request head.
bool request_ok(std::string_view head) {
  std::string_view line = head.substr(0, head.find("\r\n"));
  return line.size() > 4 + 9 && line.starts_with("GET ") &&
         (line.ends_with(" HTTP/1.1") || line.ends_with(" HTTP/1.0"));
}

class HttpConnection {
 public:
  using Output = void;
  explicit HttpConnection(pollux::TcpStream stream) : stream_(std::move(stream)) {}

  pollux::Poll<void> poll(pollux::Context& cx) {
    try {
      for (;;) {
        switch (state_) {
          case State::Reading: {
            auto free = std::span<char>(in_).subspan(have_);
            pollux::Poll<std::size_t> got = stream_.poll_read(cx, std::as_writable_bytes(free));
            if (got.is_pending()) return pollux::pending;
            if (got.value() == 0) return pollux::ready();  // the client closed
            have_ += got.value();
            parse();
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

  // Answers every whole request in in_, and drops them from it.
  void parse() {
    std::size_t start = 0;  // the first byte not answered yet
    for (;;) {
      std::string_view unread(in_.data() + scan_, have_ - scan_);
      std::size_t blank = unread.find("\r\n\r\n");
      if (blank == std::string_view::npos) {
        scan_ = std::max(have_ >= 3 ? have_ - 3 : 0, start);
        if (have_ - start > kMaxHead) reject();
        break;
      }
      std::size_t end = scan_ + blank + 4;
      if (end - start > kMaxHead || !request_ok(std::string_view(in_.data() + start, end - start))) {
        reject();
        break;
      }
      out_.append(kHello);
      start = scan_ = end;
    }
    std::memmove(in_.data(), in_.data() + start, have_ - start);
    have_ -= start;
    scan_ -= start;
  }

  void reject() {
    out_.append(kBadRequest);
    closing_ = true;
  }

  pollux::TcpStream stream_;
  State state_ = State::Reading;
  std::array<char, 2 * kMaxHead> in_{};
  std::size_t have_ = 0, scan_ = 0;  // bytes in in_; where the search for "\r\n\r\n" goes on
  std::string out_;
  std::size_t written_ = 0;
  bool closing_ = false;
};

}  // namespace

int main(int argc, char** argv) { return serve<HttpConnection>("http_hello", "http://", argc, argv); }
