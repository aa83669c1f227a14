// The Asio side of scripts/compile-times: an echo server as Asio's own
// examples write it (callbacks, a session per connection kept alive by a
// shared_ptr), so that the time to compile it is the yardstick for
// examples/echo_server.cpp. Built only by that script; never run.
#include <array>
#include <asio.hpp>
#include <cstdio>
#include <memory>

using asio::ip::tcp;

class Session : public std::enable_shared_from_this<Session> {
 public:
  explicit Session(tcp::socket socket) : socket_(std::move(socket)) {}
  void read() {
    socket_.async_read_some(asio::buffer(buffer_), [self = shared_from_this()](asio::error_code error, std::size_t n) {
      if (!error) self->write(n);
    });
  }

 private:
  void write(std::size_t n) {
    asio::async_write(socket_, asio::buffer(buffer_, n),
                      [self = shared_from_this()](asio::error_code error, std::size_t) {
                        if (!error) self->read();
                      });
  }
  tcp::socket socket_;
  std::array<char, 4096> buffer_;
};

void accept(tcp::acceptor& acceptor) {
  acceptor.async_accept([&acceptor](asio::error_code error, tcp::socket socket) {
    if (!error) std::make_shared<Session>(std::move(socket))->read();
    accept(acceptor);
  });
}

int main(int argc, char** argv) {
  asio::io_context context(1);
  tcp::acceptor acceptor(context,
                         tcp::endpoint(asio::ip::make_address("127.0.0.1"), argc > 1 ? std::atoi(argv[1]) : 7000));
  accept(acceptor);
  asio::signal_set signals(context, SIGINT, SIGTERM);
  signals.async_wait([&](asio::error_code, int) { context.stop(); });
  context.run();
  std::puts("done");
}
