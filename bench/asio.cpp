// asio VARIANT [N]: pollux's side of bench/peers/asio/ops.cpp. The same
// io_context, run by one thread, runs a pollux::AsioRuntime whose one task
// (a hand-written future) awaits N Asio operations through use_future,
// one after another.
//   post   asio::post(ioc, use_future)
//   timer  a steady_timer already due, async_wait(use_future)
//   read   one byte written into a loopback TCP connection, then
//          async_read_some(use_future) on its other end
// ns per operation, and malloc calls per operation (an interposed malloc).
#include <asio.hpp>

#include <atomic>
#include <optional>
#include <string>

#include <pollux/interop/asio.hpp>
#include <pollux/interop/asio_runtime.hpp>
#include <pollux/pollux.hpp>

#include "common.hpp"
#include "count_mallocs.hpp"

using namespace pollux;
using asio::ip::tcp;

namespace {

// Awaits `n` operations that `start` makes, one at a time, then stops the
// runtime so that ioc.run() returns.
template <class Start>
class Loop {
  using Operation = std::invoke_result_t<Start&>;

 public:
  using Output = void;
  Loop(std::uint64_t n, Start start, AsioRuntime& rt) : n_(n), start_(std::move(start)), rt_(&rt) {}
  Poll<void> poll(Context& cx) {
    for (;;) {
      if (!operation_) {
        if (done_ == n_) {
          rt_->stop();
          return ready();
        }
        operation_.emplace(start_());
      }
      auto result = operation_->poll(cx);
      if (result.is_pending()) return pending;
      if (!result.value().has_value()) bench::die("an operation failed: " + result.value().error().message());
      operation_.reset();
      ++done_;
    }
  }

 private:
  std::uint64_t n_, done_ = 0;
  Start start_;
  AsioRuntime* rt_;
  std::optional<Operation> operation_;
};

template <class Start>
void run(asio::io_context& ioc, std::uint64_t n, Start start) {
  AsioRuntime rt(ioc);
  auto handle = rt.spawn(Loop<Start>(n, std::move(start), rt));
  ioc.restart();
  ioc.run();
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "post");
  std::uint64_t n = args.num(1, 1'000'000);
  asio::io_context ioc{1};
  tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  tcp::socket writer(ioc), reader(ioc);
  writer.connect(acceptor.local_endpoint());
  reader = acceptor.accept();
  writer.set_option(tcp::no_delay(true));
  asio::steady_timer timer(ioc);
  char byte = 'x';
  auto once = [&](std::uint64_t count) {
    if (variant == "post") {
      run(ioc, count, [&] { return asio::post(ioc, use_future); });
    } else if (variant == "timer") {
      run(ioc, count, [&] {
        timer.expires_at(asio::steady_timer::clock_type::time_point{});  // due already
        return timer.async_wait(use_future);
      });
    } else if (variant == "read") {
      run(ioc, count, [&] {
        asio::write(writer, asio::buffer(&byte, 1));
        return reader.async_read_some(asio::buffer(&byte, 1), use_future);
      });
    } else {
      bench::die("unknown variant '" + variant + "' (post, timer, read)");
    }
  };
  once(n / 10);  // warms the slab, Asio's recycling allocator and the runtime's queues
  std::uint64_t before = bench::mallocs.load();
  auto t0 = bench::Clock::now();
  once(n);
  double seconds = bench::secs_since(t0);
  double per_op = static_cast<double>(bench::mallocs.load() - before) / static_cast<double>(n);
  bench::emit("asio_ops", variant, n, seconds, {{"mallocs_per_op", per_op}});
}
