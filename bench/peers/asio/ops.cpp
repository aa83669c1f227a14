// ops VARIANT [N]: Asio's own side of the use_future rows (bench/asio.cpp):
// one io_context run by one thread, one asio::awaitable coroutine that
// awaits N operations through use_awaitable, one after another.
//   post   co_await asio::post(ioc, use_awaitable)
//   timer  a steady_timer already due, co_await async_wait(use_awaitable)
//   read   one byte written into a loopback TCP connection, then
//          co_await async_read_some(use_awaitable) on its other end
// ns per operation, and malloc calls per operation (an interposed malloc).
#include <asio.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" void* __libc_malloc(std::size_t size);

namespace {
std::atomic<std::uint64_t> mallocs{0};
}

extern "C" void* malloc(std::size_t size) {
  mallocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}

using asio::ip::tcp;

namespace {

asio::awaitable<void> run(const std::string& variant, std::uint64_t n, tcp::socket* writer, tcp::socket* reader) {
  auto ex = co_await asio::this_coro::executor;
  if (variant == "post") {
    for (std::uint64_t i = 0; i < n; ++i) co_await asio::post(ex, asio::use_awaitable);
  } else if (variant == "timer") {
    asio::steady_timer timer(ex);
    for (std::uint64_t i = 0; i < n; ++i) {
      timer.expires_at(asio::steady_timer::clock_type::time_point{});  // due already
      co_await timer.async_wait(asio::use_awaitable);
    }
  } else {
    char byte = 'x';
    for (std::uint64_t i = 0; i < n; ++i) {
      asio::write(*writer, asio::buffer(&byte, 1));
      co_await reader->async_read_some(asio::buffer(&byte, 1), asio::use_awaitable);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string variant = argc > 1 ? argv[1] : "post";
  std::uint64_t n = argc > 2 ? static_cast<std::uint64_t>(std::strtod(argv[2], nullptr)) : 1'000'000;
  if (variant != "post" && variant != "timer" && variant != "read") {
    std::fprintf(stderr, "unknown variant '%s' (post, timer, read)\n", variant.c_str());
    return 2;
  }
  asio::io_context ioc{1};
  tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  tcp::socket writer(ioc), reader(ioc);
  writer.connect(acceptor.local_endpoint());
  reader = acceptor.accept();
  writer.set_option(tcp::no_delay(true));
  auto once = [&](std::uint64_t count) {
    asio::co_spawn(ioc, run(variant, count, &writer, &reader), asio::detached);
    ioc.restart();
    ioc.run();
  };
  once(n / 10);  // warms Asio's recycling allocator and the frames
  std::uint64_t before = mallocs.load();
  auto t0 = std::chrono::steady_clock::now();
  once(n);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double per_op = static_cast<double>(mallocs.load() - before) / static_cast<double>(n);
  double ns = seconds * 1e9 / static_cast<double>(n);
  std::printf(
      "{\"bench\":\"asio_ops\",\"impl\":\"asio\",\"variant\":\"%s\",\"n\":%llu,\"ns_per_op\":%.3f,"
      "\"ops_per_s\":%.3f,\"mallocs_per_op\":%.3f}\n",
      variant.c_str(), static_cast<unsigned long long>(n), ns, 1e9 / ns, per_op);
}
