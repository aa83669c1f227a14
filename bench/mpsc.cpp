// mpsc [bounded_1p|bounded_4p|unbounded_1p|unbounded_4p|bounded_4p_mt|unbounded_4p_mt] [N=1e7]
// P producer tasks send N u64 in total through one mpsc channel to one
// consumer task; producer p sends p*N/P .. (p+1)*N/P - 1 in order. bounded:
// mpsc::channel(1024) and send(v) awaited; unbounded: unbounded_channel()
// and send(v). The consumer is spawned first, then the producers, from
// inside block_on, which awaits the producers and then the consumer; the
// consumer checks sum and count. ns per message; `allocations` made while
// timed (tasks and the channel: none per message).
#include <algorithm>

#include "tasks.hpp"

using namespace pollux;

namespace {

using Sum = std::pair<std::uint64_t, std::uint64_t>;

auto consumer(mpsc::Receiver<std::uint64_t> rx) {
  return poll_fn<Sum>([rx = std::move(rx), sum = Sum{0, 0}](Context& cx) mutable -> Poll<Sum> {
    for (;;) {
      auto value = rx.poll_recv(cx);
      if (value.is_pending()) return pending;
      if (!value.value()) return ready(sum);
      sum.first += *value.value();
      ++sum.second;
    }
  });
}

auto bounded_producer(mpsc::Sender<std::uint64_t> tx, std::uint64_t from, std::uint64_t to) {
  return poll_fn<Sum>([tx = std::move(tx), v = from, to,
                       send = std::optional<mpsc::Sender<std::uint64_t>::Send>()](Context& cx) mutable -> Poll<Sum> {
    for (;;) {
      if (!send) {
        if (v == to) return ready(Sum{});
        send.emplace(tx.send(v));
      }
      auto sent = send->poll(cx);
      if (sent.is_pending()) return pending;
      if (!sent.value()) bench::die("the receiver went away");
      send.reset();
      ++v;
    }
  });
}

auto unbounded_producer(mpsc::UnboundedSender<std::uint64_t> tx, std::uint64_t from, std::uint64_t to) {
  return lazy([tx = std::move(tx), from, to] {
    for (std::uint64_t v = from; v < to; ++v) {
      if (!tx.send(v)) bench::die("the receiver went away");
    }
    return Sum{};
  });
}

auto run(bool bounded, std::uint64_t producers, std::uint64_t n) {
  return bench::spawn_and_join<Sum>([=] {
    std::vector<JoinHandle<Sum>> handles;
    auto range = [&](std::uint64_t p) { return std::pair(p * n / producers, (p + 1) * n / producers); };
    if (bounded) {
      auto [tx, rx] = mpsc::channel<std::uint64_t>(1024);
      handles.push_back(spawn(consumer(std::move(rx))));
      for (std::uint64_t p = 0; p < producers; ++p) {
        handles.push_back(spawn(bounded_producer(tx, range(p).first, range(p).second)));
      }
    } else {
      auto [tx, rx] = mpsc::unbounded_channel<std::uint64_t>();
      handles.push_back(spawn(consumer(std::move(rx))));
      for (std::uint64_t p = 0; p < producers; ++p) {
        handles.push_back(spawn(unbounded_producer(tx, range(p).first, range(p).second)));
      }
    }
    std::rotate(handles.begin(), handles.begin() + 1, handles.end());  // await the producers first
    return handles;
  });
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "bounded_1p");
  std::uint64_t n = args.num(1, 10'000'000);
  bool bounded = variant.starts_with("bounded");
  std::uint64_t producers = variant.find("_4p") != std::string::npos ? 4 : 1;
  if (variant != "bounded_1p" && variant != "bounded_4p" && variant != "unbounded_1p" && variant != "unbounded_4p"
      && variant != "bounded_4p_mt" && variant != "unbounded_4p_mt") {
    bench::die("unknown variant '" + variant + "'");
  }
  Runtime rt = bench::runtime_for(variant);
  auto result = bench::timed(
      rt, n, [&](std::uint64_t m) { return run(bounded, producers, m); },
      [](std::vector<Sum> sums, std::uint64_t m) {
        if (sums.back() != Sum{m * (m == 0 ? 0 : m - 1) / 2, m}) bench::die("wrong sum or count");
      });
  bench::emit("mpsc", variant, n, result.seconds,
              {{"producers", double(producers)}, {"allocations", double(result.allocations)}});
}
