// tls VARIANT [N] CERT KEY CA
//   handshake  N full TLS 1.3 handshakes over loopback (no resumption), a
//              TCP connection each, client and server in this process
//   bulk       N MiB from client to server over one TLS connection, in
//              writes of 1 MiB, on a current-thread runtime
// Emits allocs_per_record too: allocations (operator new and OpenSSL's
// own) during the bulk transfer, per 16 KiB record.
#include <openssl/crypto.h>

#include <pollux/pollux.hpp>
#include <pollux/tls.hpp>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "common.hpp"
#include "repeat.hpp"

namespace {
std::atomic<std::uint64_t> allocations{0};
std::atomic<std::uint64_t> openssl_allocations{0};
void* counted_malloc(std::size_t n, const char*, int) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  openssl_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n);
}
void* counted_realloc(void* p, std::size_t n, const char*, int) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::realloc(p, n);
}
void counted_free(void* p, const char*, int) { std::free(p); }
}  // namespace

void* operator new(std::size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace pollux;
using namespace pollux::tls;

int main(int argc, char** argv) {
  CRYPTO_set_mem_functions(counted_malloc, counted_realloc, counted_free);
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "handshake");
  std::uint64_t n = args.num(1, 2000);
  if (args.v.size() < 5) bench::die("usage: tls handshake|bulk N CERT KEY CA");
  TlsAcceptor acceptor(TlsConfig::server().certificate_chain_file(args.v[2]).private_key_file(args.v[3]));
  TlsConnector connector(TlsConfig::client().ca_file(args.v[4]).session_resumption(false));
  auto rt = Runtime::current_thread();
  TcpListener listener = TcpListener::bind("127.0.0.1:0");
  auto connect_pair = [&] {
    auto [client, accepted] = rt.block_on(join(TcpStream::connect(listener.local_addr()), listener.accept()));
    client.set_nodelay(true);
    accepted.first.set_nodelay(true);
    return std::make_pair(std::move(client), std::move(accepted.first));
  };
  double seconds = 0;
  std::vector<std::pair<const char*, double>> extra;
  if (variant == "handshake") {
    auto once = [&](std::uint64_t) {
      return join(TcpStream::connect(listener.local_addr()), listener.accept()) | then([&](auto connected) {
               auto& [client, accepted] = connected;
               return join(connector.connect("localhost", std::move(client)),
                           acceptor.accept(std::move(accepted.first)))
                      | map([](auto) { return Unit{}; });
             });
    };
    rt.block_on(bench::Repeat(n / 10, once));
    auto t0 = bench::Clock::now();
    rt.block_on(bench::Repeat(n, once));
    seconds = bench::secs_since(t0);
  } else if (variant == "bulk") {
    auto [c, s] = connect_pair();
    auto [client, server] =
        rt.block_on(join(connector.connect("localhost", std::move(c)), acceptor.accept(std::move(s))));
    std::vector<std::byte> chunk(1 << 20, std::byte{'b'});
    std::vector<std::byte> sink(1 << 20);
    auto transfer = [&](std::uint64_t mib) {
      std::uint64_t received = 0;
      auto send = bench::Repeat(mib, [&](std::uint64_t) { return write_all(client, chunk); })
                  | then([&](std::uint64_t) { return flush(client); });
      auto receive = poll_fn([&](Context& cx) -> Poll<Unit> {
        while (received < mib << 20) {
          Poll<std::size_t> got = server.poll_read(cx, sink);
          if (got.is_pending()) return pending;
          if (got.value() == 0) bench::die("early end");
          received += got.value();
        }
        return ready(Unit{});
      });
      rt.block_on(join(std::move(send), std::move(receive)));
    };
    transfer(n / 10 + 1);
    std::uint64_t before = allocations.load();
    std::uint64_t openssl_before = openssl_allocations.load();
    auto t0 = bench::Clock::now();
    transfer(n);
    seconds = bench::secs_since(t0);
    double records = static_cast<double>(n) * 64;  // 16 KiB each
    extra.emplace_back("allocs_per_record", static_cast<double>(allocations.load() - before) / records);
    extra.emplace_back("openssl_allocs_per_record",
                       static_cast<double>(openssl_allocations.load() - openssl_before) / records);
    extra.emplace_back("mib_per_s", static_cast<double>(n) / seconds);
  } else {
    bench::die("unknown variant '" + variant + "' (handshake, bulk)");
  }
  bench::emit("tls", variant, n, seconds, extra);
}
