// broadcast [fanout_16] [N=1e6]
// One sender task sends 0 .. N-1 into broadcast::channel(1024) with 16
// receiver tasks, subscribed and spawned first; each receiver sums and
// counts until the channel closes. The sender sends in batches of 256 and
// after each awaits an acknowledgement (Notify ack): each receiver, after
// every 256th value and after value N-1, increments a shared counter, and
// the one that brings it to 16 resets it and calls ack.notify_one(). ns
// per message per receiver: time / (N * 16); `messages` = N.
#include <algorithm>
#include <memory>

#include "tasks.hpp"

using namespace pollux;

namespace {

constexpr std::uint64_t kCapacity = 1024, kReceivers = 16, kBatch = 256;

struct Shared {
  Notify ack;
  std::atomic<std::uint64_t> done{0};
};
using Sum = std::pair<std::uint64_t, std::uint64_t>;

auto receiver(broadcast::Receiver<std::uint64_t> rx, std::shared_ptr<Shared> s, std::uint64_t n) {
  return poll_fn<Sum>(
      [rx = std::move(rx), s, n, sum = Sum{0, 0},
       recv = std::optional<broadcast::Receiver<std::uint64_t>::Recv>()](Context& cx) mutable -> Poll<Sum> {
        for (;;) {
          if (!recv) recv.emplace(rx.recv());
          auto value = recv->poll(cx);
          if (value.is_pending()) return pending;
          recv.reset();
          if (!value.value()) {
            if (value.value().error().is_lagged()) bench::die("a receiver lagged");
            return ready(sum);
          }
          sum.first += value.value().value();
          ++sum.second;
          if ((sum.second % kBatch == 0 || sum.second == n)
              && s->done.fetch_add(1, std::memory_order_acq_rel) + 1 == kReceivers) {
            s->done.store(0, std::memory_order_release);
            s->ack.notify_one();
          }
        }
      });
}

auto sender(broadcast::Sender<std::uint64_t> tx, std::shared_ptr<Shared> s, std::uint64_t n) {
  return poll_fn<Sum>([tx = std::optional(std::move(tx)), s, n, i = std::uint64_t{0},
                       ack = std::optional<Notify::Notified>()](Context& cx) mutable -> Poll<Sum> {
    for (;;) {
      if (ack) {
        if (ack->poll(cx).is_pending()) return pending;
        ack.reset();
      }
      if (i == n) {
        tx.reset();  // closes the channel
        return ready(Sum{});
      }
      std::uint64_t end = std::min(i + kBatch, n);
      for (; i < end; ++i) {
        if (!tx->send(i)) bench::die("no receivers");
      }
      ack.emplace(s->ack.notified());
    }
  });
}

auto run(std::uint64_t n) {
  return bench::spawn_and_join<Sum>([=] {
    auto [tx, first] = broadcast::channel<std::uint64_t>(kCapacity);
    auto s = std::make_shared<Shared>();
    std::vector<JoinHandle<Sum>> handles;
    for (std::uint64_t r = 0; r < kReceivers; ++r) handles.push_back(spawn(receiver(tx.subscribe(), s, n)));
    { auto unused = std::move(first); }
    handles.insert(handles.begin(), spawn(sender(std::move(tx), s, n)));
    return handles;
  });
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "fanout_16");
  std::uint64_t n = args.num(1, 1'000'000);
  if (variant != "fanout_16") bench::die("unknown variant '" + variant + "' (fanout_16)");
  Runtime rt = bench::runtime_for(variant);
  auto result = bench::timed(rt, n, run, [](std::vector<Sum> sums, std::uint64_t m) {
    for (std::size_t r = 1; r < sums.size(); ++r) {
      if (sums[r] != Sum{m * (m == 0 ? 0 : m - 1) / 2, m}) bench::die("wrong sum or count");
    }
  });
  bench::emit("broadcast", variant, n * kReceivers, result.seconds,
              {{"messages", double(n)},
               {"receivers", double(kReceivers)},
               {"batch", double(kBatch)},
               {"allocations", double(result.allocations)}});
}
