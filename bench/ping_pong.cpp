// ping_pong [oneshot] [M=1000000]
// Two spawned tasks on a LocalExecutor bounce a counter M times; each
// message carries the sender for the next hop, so every round trip makes
// two fresh oneshot channels. ns per round trip (A -> B -> A).
#include <pollux/pollux.hpp>

#include "common.hpp"

using namespace pollux;

namespace {

struct Pong;
struct Ping {
  std::uint64_t n;
  oneshot::Sender<Pong> reply;
};
struct Pong {
  std::uint64_t n;
  oneshot::Sender<Ping> next;
};

// B: while a Ping arrives, answer it with n + 1 and a fresh channel.
class TaskB {
 public:
  using Output = void;
  explicit TaskB(oneshot::Receiver<Ping> rx) : rx_(std::move(rx)) {}

  Poll<void> poll(Context& cx) {
    for (;;) {
      auto ping = rx_->poll(cx);
      if (ping.is_pending()) return pending;
      if (!ping.value()) return ready();  // A is done: its sender is gone
      auto [next, next_rx] = oneshot::channel<Ping>();
      if (!ping.value().value().reply.send(Pong{ping.value().value().n + 1, std::move(next)})) return ready();
      rx_.emplace(std::move(next_rx));
    }
  }

 private:
  std::optional<oneshot::Receiver<Ping>> rx_;
};

// A: m times, send a Ping with a reply channel and await the Pong.
class TaskA {
 public:
  using Output = std::uint64_t;
  TaskA(oneshot::Sender<Ping> tx, std::uint64_t m) : tx_(std::move(tx)), m_(m) {}

  Poll<std::uint64_t> poll(Context& cx) {
    for (;;) {
      if (!reply_rx_) {
        if (round_ == m_) {
          tx_.reset();  // ends B
          return ready(n_);
        }
        auto [reply, reply_rx] = oneshot::channel<Pong>();
        if (!tx_->send(Ping{n_, std::move(reply)})) bench::die("B went away");
        tx_.reset();
        reply_rx_.emplace(std::move(reply_rx));
      }
      auto pong = reply_rx_->poll(cx);
      if (pong.is_pending()) return pending;
      n_ = pong.value().value().n;
      tx_.emplace(std::move(pong.value().value().next));
      reply_rx_.reset();
      ++round_;
    }
  }

 private:
  std::optional<oneshot::Sender<Ping>> tx_;
  std::optional<oneshot::Receiver<Pong>> reply_rx_;
  std::uint64_t m_, n_ = 0, round_ = 0;
};

std::uint64_t run(LocalExecutor& ex, std::uint64_t m) {
  auto [tx, rx] = oneshot::channel<Ping>();
  auto b = ex.spawn(TaskB(std::move(rx)));
  auto a = ex.spawn(TaskA(std::move(tx), m));
  auto [n, unit] = ex.block_on(join(std::move(a), std::move(b)));
  unit.value();
  return n.value();
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "oneshot");
  std::uint64_t m = args.num(1, 1'000'000);
  if (variant != "oneshot") bench::die("unknown variant '" + variant + "' (oneshot)");
  LocalExecutor ex;
  run(ex, m / 10);
  auto t0 = bench::Clock::now();
  std::uint64_t n = run(ex, m);
  double seconds = bench::secs_since(t0);
  if (n != m) bench::die("wrong count");
  bench::emit("ping_pong", variant, m, seconds);
}
