// http_hello [ct|mt] [PORT=7000] [MAX_SECS=600]
// Minimal HTTP/1.1 keep-alive server on 127.0.0.1:PORT, the peers'
// workload and nothing more: one task per connection; every `GET <path>
// HTTP/1.x` gets 200 and "Hello, world!", the answers to the requests of
// one read go out in one write, anything else (or a head over 8 KiB)
// closes the connection. No idle or request deadline, no connection count,
// no graceful shutdown (examples/http_hello.cpp has those; bare_server.hpp).
// ct: current-thread runtime; mt: two workers.
#include <span>
#include <string>
#include <system_error>

#include <pollux/pollux.hpp>

#include "../examples/http_request.hpp"
#include "bare_server.hpp"

using namespace pollux;

namespace {

class Connection {
 public:
  using Output = void;
  explicit Connection(TcpStream stream) : stream_(std::move(stream)) {}

  Poll<void> poll(Context& cx) {
    try {
      for (;;) {
        switch (state_) {
          case State::Reading: {
            POLLUX_TRY_READY_ASSIGN(std::size_t got,
                                    stream_.poll_read(cx, std::as_writable_bytes(requests_.free_space())));
            if (got == 0) return ready();
            answer(got);
            break;
          }
          case State::Writing: {
            auto rest = std::as_bytes(std::span<const char>(out_)).subspan(written_);
            POLLUX_TRY_READY_ASSIGN(std::size_t put, stream_.poll_write(cx, rest));
            written_ += put;
            if (written_ < out_.size()) break;
            out_.clear();
            if (closing_) return ready();
            state_ = State::Reading;
            if (requests_.unanswered()) answer(0);  // a burst whose answers filled one write
            break;
          }
        }
      }
    } catch (const std::system_error&) {
      return ready();
    }
  }

 private:
  enum class State { Reading, Writing };

  // `n` more bytes arrived: answers the whole requests among them.
  void answer(std::size_t n) {
    closing_ = !requests_.received(n, out_);
    if (out_.empty()) return;  // no whole request yet: read more
    written_ = 0;
    state_ = State::Writing;
  }

  TcpStream stream_;
  State state_ = State::Reading;
  http::RequestReader requests_;
  std::string out_;
  std::size_t written_ = 0;
  bool closing_ = false;
};

}  // namespace

int main(int argc, char** argv) { return bench::serve_bare<Connection>("http_hello", argc, argv); }
