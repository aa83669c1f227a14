// join_all [join_all|unordered] [K=1000] [TOTAL=1000000]
// Per round: K pollux oneshot receivers are awaited through join_all (or
// collected into a FuturesUnordered and drained), joined (pollux::join)
// with a completer future that sends on the K senders in a
// fixed random order (splitmix64, seed 42), one send per poll, waking
// itself after each, so the join_all is polled between completions.
// Rounds = TOTAL / K, all driven by one block_on. ns_per_op covers the join
// only (channel creation excluded); ns_per_child_incl_setup covers all.
#include <pollux/pollux.hpp>

#include <numeric>

#include "common.hpp"

using namespace pollux;

namespace {

using Receiver = oneshot::Receiver<std::uint64_t>;
using Sender = oneshot::Sender<std::uint64_t>;

// Sends one value per poll in `order`, yielding (self-wake) after each send.
class Completer {
 public:
  using Output = void;
  Completer(std::vector<Sender> senders, const std::vector<std::uint32_t>& order)
      : senders_(std::move(senders)), order_(&order) {}

  Poll<void> poll(Context& cx) {
    if (next_ == order_->size()) return ready();
    std::uint32_t i = (*order_)[next_++];
    (void)senders_[i].send(i);
    cx.waker().wake_by_ref();
    return pending;
  }

 private:
  std::vector<Sender> senders_;
  const std::vector<std::uint32_t>* order_;
  std::size_t next_ = 0;
};

// The FuturesUnordered variant: drains the set, summing the values.
class DrainSet {
 public:
  using Output = std::uint64_t;
  explicit DrainSet(std::vector<Receiver> receivers) {
    for (auto& rx : receivers) set_.push(std::move(rx));
  }
  Poll<std::uint64_t> poll(Context& cx) {
    for (;;) {
      auto item = set_.poll_next(cx);
      if (item.is_pending()) return pending;
      if (!item.value()) return ready(sum_);
      sum_ += item.value()->value();
    }
  }

 private:
  FuturesUnordered<Receiver> set_;
  std::uint64_t sum_ = 0;
};

template <class Joiner>
class Rounds {
 public:
  using Output = void;
  Rounds(const std::vector<std::uint32_t>& order, std::uint64_t rounds) : order_(order), rounds_(rounds) {}

  Poll<void> poll(Context& cx) {
    const std::uint64_t k = order_.size();
    for (;;) {
      if (!current_) {
        if (round_ == rounds_) return ready();
        std::vector<Sender> senders;
        std::vector<Receiver> receivers;
        senders.reserve(k);
        receivers.reserve(k);
        for (std::uint64_t i = 0; i < k; ++i) {
          auto [tx, rx] = oneshot::channel<std::uint64_t>();
          senders.push_back(std::move(tx));
          receivers.push_back(std::move(rx));
        }
        Completer completer(std::move(senders), order_);
        round_start_ = bench::Clock::now();
        if constexpr (std::is_same_v<Joiner, DrainSet>) {
          current_.emplace(DrainSet(std::move(receivers)), std::move(completer));
        } else {
          current_.emplace(join_all(std::move(receivers)), std::move(completer));
        }
      }
      auto p = current_->poll(cx);
      if (p.is_pending()) return pending;
      join_seconds += bench::secs_since(round_start_);
      std::uint64_t sum = 0;
      if constexpr (std::is_same_v<Joiner, DrainSet>) {
        sum = std::get<0>(p.value());
      } else {
        for (auto& v : std::get<0>(p.value())) sum += v.value();
      }
      if (sum != k * (k - 1) / 2) bench::die("join_all: wrong sum");
      current_.reset();
      ++round_;
    }
  }

  double join_seconds = 0;

 private:
  const std::vector<std::uint32_t>& order_;
  std::uint64_t rounds_, round_ = 0;
  bench::Clock::time_point round_start_;
  std::optional<Join<Joiner, Completer>> current_;
};

template <class Joiner>
void measure(const char* variant, const std::vector<std::uint32_t>& order, std::uint64_t rounds) {
  Rounds<Joiner> warmup(order, std::max<std::uint64_t>(rounds / 10, 1));
  block_on(by_ref(warmup));
  auto t0 = bench::Clock::now();
  Rounds<Joiner> measured(order, rounds);
  block_on(by_ref(measured));
  double all_seconds = bench::secs_since(t0);
  std::uint64_t k = order.size();
  std::uint64_t children = rounds * k;
  bench::emit("join_all", variant, children, measured.join_seconds,
              {{"k", static_cast<double>(k)},
               {"rounds", static_cast<double>(rounds)},
               {"ns_per_child_incl_setup", all_seconds * 1e9 / static_cast<double>(children)}});
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "join_all");
  std::uint64_t k = args.num(1, 1000);
  std::uint64_t total = args.num(2, 1'000'000);
  if (k == 0) bench::die("K must be at least 1");
  std::uint64_t rounds = std::max<std::uint64_t>(total / k, 1);
  std::vector<std::uint32_t> order(k);
  std::iota(order.begin(), order.end(), 0u);
  bench::Rng(bench::kSeed).shuffle(order);
  if (variant == "join_all") {
    measure<JoinAll<Receiver>>("join_all", order, rounds);
  } else if (variant == "unordered") {
    measure<DrainSet>("futures_unordered", order, rounds);
  } else {
    bench::die("unknown variant '" + variant + "' (join_all, unordered)");
  }
}
