// select [select|select_biased|select_all] [N=1000000]
// select:        pollux::select(ready_future(i), pending_future()) per iteration,
//                polled inside one future driven by block_on (the peer's
//                futures::future::select(ready(i), pending()) awaited in a task).
// select_biased: the same with select_biased (argument order, no rotation).
// select_all:    select_all over 64 futures, 63 never ready and one (index
//                i % 64) that wakes itself on its first poll and is ready on the
//                second, so every iteration goes back to block_on once.
// ns per iteration.
#include <pollux/pollux.hpp>

#include <ranges>

#include "common.hpp"

using namespace pollux;

namespace {

// value == kNever: never ready. Otherwise: Pending + self-wake, then Ready.
struct Child {
  using Output = std::uint64_t;
  static constexpr std::uint64_t kNever = ~0ull;
  std::uint64_t value;
  bool polled = false;
  Poll<std::uint64_t> poll(Context& cx) {
    if (value == kNever) return pending;
    if (polled) return ready(value);
    polled = true;
    cx.waker().wake_by_ref();
    return pending;
  }
};

template <SelectOrder Order>
std::uint64_t run_select(std::uint64_t n) {
  return block_on(poll_fn([n](Context& cx) -> Poll<std::uint64_t> {
    std::uint64_t sum = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      Select<Order, ReadyFuture<std::uint64_t>, PendingFuture<std::uint64_t>> s(ready_future(bench::black_box(i)),
                                                                                pending_future<std::uint64_t>());
      auto p = s.poll(cx);
      if (p.is_pending() || p.value().index() != 0) bench::die("select: the ready future did not win");
      sum += std::get<0>(p.value());
    }
    return ready(sum);
  }));
}

// The loop of the peer's async fn, by hand: one SelectAll in flight at a time.
class SelectAllLoop {
 public:
  using Output = std::uint64_t;
  explicit SelectAllLoop(std::uint64_t n) : n_(n) {}

  Poll<std::uint64_t> poll(Context& cx) {
    for (;;) {
      if (!current_) {
        if (i_ == n_) return ready(sum_);
        // As the peer does: the children come from a view, collected by select_all.
        const std::uint64_t hit = i_ % 64, value = i_;
        current_.emplace(select_all(std::views::iota(std::uint64_t{0}, std::uint64_t{64})
                                    | std::views::transform([hit, value](std::uint64_t j) {
                                        return Child{j == hit ? value : Child::kNever};
                                      })));
      }
      auto p = current_->poll(cx);
      if (p.is_pending()) return pending;
      if (p.value().index != i_ % 64) bench::die("select_all: wrong winner");
      sum_ += p.value().value;
      current_.reset();
      ++i_;
    }
  }

 private:
  std::uint64_t n_, i_ = 0, sum_ = 0;
  std::optional<SelectAll<Child>> current_;
};

std::uint64_t run(const std::string& variant, std::uint64_t n) {
  if (variant == "select") return run_select<SelectOrder::Fair>(n);
  if (variant == "select_biased") return run_select<SelectOrder::Biased>(n);
  if (variant == "select_all") return block_on(SelectAllLoop(n));
  bench::die("unknown variant '" + variant + "' (select, select_biased, select_all)");
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "select");
  std::uint64_t n = args.num(1, 1'000'000);
  run(variant, n / 10);
  auto t0 = bench::Clock::now();
  std::uint64_t sum = run(variant, n);
  double seconds = bench::secs_since(t0);
  if (sum != n * (n - 1) / 2) bench::die("wrong sum");
  bench::emit("select", variant, n, seconds);
}
