// watch [changed] [N=3e6]
// watch::channel(u64 max). The receiver task loops on changed() until the
// sender is gone, reads the value with borrow() and counts; the sender
// task (spawned second) does N times { send(i); yield once (wake itself,
// Pending) }. `seen`: changes the receiver saw; the last value seen must be
// N-1. ns per send.
#include <limits>

#include "tasks.hpp"

using namespace pollux;

namespace {

using Seen = std::pair<std::uint64_t, std::uint64_t>;  // (seen, last)

auto receiver(watch::Receiver<std::uint64_t> rx) {
  return poll_fn<Seen>(
      [rx = std::move(rx), seen = Seen{0, std::numeric_limits<std::uint64_t>::max()},
       changed = std::optional<watch::Receiver<std::uint64_t>::Changed>()](Context& cx) mutable -> Poll<Seen> {
        for (;;) {
          if (!changed) changed.emplace(rx.changed());
          auto result = changed->poll(cx);
          if (result.is_pending()) return pending;
          changed.reset();
          if (!result.value()) return ready(seen);
          seen.second = *rx.borrow();
          ++seen.first;
        }
      });
}

auto sender(watch::Sender<std::uint64_t> tx, std::uint64_t n) {
  return poll_fn<Seen>([tx = std::optional(std::move(tx)), n, i = std::uint64_t{0}](Context& cx) mutable -> Poll<Seen> {
    if (i == n) {
      tx.reset();
      return ready(Seen{});
    }
    if (!tx->send(i)) bench::die("the receiver went away");
    ++i;
    cx.waker().wake_by_ref();  // yield_raw
    return pending;
  });
}

auto run(std::uint64_t n) {
  return bench::spawn_and_join<Seen>([=] {
    auto [tx, rx] = watch::channel<std::uint64_t>(std::numeric_limits<std::uint64_t>::max());
    std::vector<JoinHandle<Seen>> handles;
    handles.push_back(spawn(receiver(std::move(rx))));
    handles.push_back(spawn(sender(std::move(tx), n)));
    std::swap(handles[0], handles[1]);  // await the sender first
    return handles;
  });
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "changed");
  std::uint64_t n = args.num(1, 3'000'000);
  if (variant != "changed") bench::die("unknown variant '" + variant + "' (changed)");
  Runtime rt = bench::runtime_for(variant);
  std::uint64_t seen = 0;
  auto result = bench::timed(rt, n, run, [&](std::vector<Seen> out, std::uint64_t m) {
    if (m > 0 && (out[1].second != m - 1 || out[1].first == 0 || out[1].first > m)) bench::die("wrong last value");
    seen = out[1].first;
  });
  bench::emit("watch", variant, n, result.seconds,
              {{"seen", double(seen)}, {"allocations", double(result.allocations)}});
}
