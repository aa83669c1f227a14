// coro VARIANT [N]: the coroutine bridges against hand-written futures doing
// the same, on a LocalExecutor; ns per operation, and malloc calls per
// operation (an interposed malloc counts them; the slab is warmed first).
//   ready_poll       N polls of a Ready future, by hand, in one poll
//   ready_await      N co_awaits of a Ready future in one Coro
//   yield_poll       a hand-written task that yields N times (yield_now)
//   yield_await      a Coro that co_awaits yield_now() N times
//   foreign_await    a coroutine of the user's co_awaits awaitable(f) N times;
//                    each f is Pending once, then woken, polled and resumed
//   spawn_join_future spawn N hand-written futures (Ready with i), join each
//   spawn_join_coro  spawn N Coros (co_return i), join each
#include <malloc.h>

#include <atomic>
#include <coroutine>
#include <cstdlib>
#include <optional>
#include <vector>

#include <pollux/interop/coroutine.hpp>
#include <pollux/pollux.hpp>

#include "common.hpp"
#include "count_mallocs.hpp"

using namespace pollux;

namespace {

// N polls of a Ready future inside one poll: the floor of ready_await.
class PollReady {
 public:
  using Output = std::uint64_t;
  explicit PollReady(std::uint64_t n) : n_(n) {}
  Poll<std::uint64_t> poll(Context& cx) {
    std::uint64_t sum = 0;
    for (std::uint64_t i = 0; i < n_; ++i) {
      auto f = ready_future(bench::black_box(i));
      sum += bench::black_box(f.poll(cx).value());
    }
    return ready(sum);
  }

 private:
  std::uint64_t n_;
};

Coro<std::uint64_t> await_ready(std::uint64_t n) {
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) sum += bench::black_box(co_await ready_future(bench::black_box(i)));
  co_return sum;
}

// A task that yields N times: the floor of yield_await.
class YieldLoop {
 public:
  using Output = std::uint64_t;
  explicit YieldLoop(std::uint64_t n) : n_(n) {}
  Poll<std::uint64_t> poll(Context& cx) {
    for (;;) {
      if (yield_.poll(cx).is_pending()) return pending;
      if (++count_ == n_) return ready(count_);
      yield_ = YieldNow{};
    }
  }

 private:
  std::uint64_t n_, count_ = 0;
  YieldNow yield_;
};

Coro<std::uint64_t> await_yield(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) co_await yield_now();
  co_return n;
}

// A future Pending at its first poll, keeping the waker where the driver
// below wakes it.
struct Slot {
  Waker waker;
};
class OnceLater {
 public:
  using Output = int;
  explicit OnceLater(Slot& slot) : slot_(&slot) {}
  Poll<int> poll(Context& cx) {
    if (polled_) return ready(1);
    polled_ = true;
    slot_->waker = cx.waker();
    return pending;
  }

 private:
  Slot* slot_;
  bool polled_ = false;
};

// A coroutine type of the user's: starts at once, destroyed by its owner.
struct Detached {
  struct promise_type {
    Detached get_return_object() { return {std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() { std::abort(); }
  };
  std::coroutine_handle<promise_type> handle;
};

Detached foreign_loop(Slot& slot, std::uint64_t n, std::uint64_t& sum) {
  for (std::uint64_t i = 0; i < n; ++i) sum += static_cast<std::uint64_t>(co_await awaitable(OnceLater(slot)));
}

std::uint64_t run_foreign(std::uint64_t n) {
  Slot slot;
  std::uint64_t sum = 0;
  Detached coroutine = foreign_loop(slot, n, sum);
  while (!coroutine.handle.done()) std::move(slot.waker).wake();  // polls, resumes, awaits the next
  coroutine.handle.destroy();
  return sum;
}

Coro<std::uint64_t> returns(std::uint64_t i) { co_return i; }

template <class Make>
class SpawnJoin {
 public:
  using Output = std::uint64_t;
  SpawnJoin(std::uint64_t n, Make make) : n_(n), make_(make) {}
  Poll<std::uint64_t> poll(Context& cx) {
    if (handles_.empty()) {
      handles_.reserve(n_);
      for (std::uint64_t i = 0; i < n_; ++i) handles_.push_back(pollux::spawn(make_(i)));
    }
    while (next_ < handles_.size()) {
      auto value = handles_[next_].poll(cx);
      if (value.is_pending()) return pending;
      sum_ += value.value().value();
      ++next_;
    }
    return ready(sum_);
  }

 private:
  std::uint64_t n_, sum_ = 0;
  Make make_;
  std::size_t next_ = 0;
  std::vector<JoinHandle<std::uint64_t>> handles_{};
};

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "ready_await");
  std::uint64_t n = args.num(1, 10'000'000);
  LocalExecutor ex;
  auto once = [&](std::uint64_t count) -> std::uint64_t {
    if (variant == "ready_poll") return ex.block_on(PollReady(count));
    if (variant == "ready_await") return ex.block_on(await_ready(count));
    if (variant == "yield_poll") return ex.block_on(ex.spawn(YieldLoop(count))).value();
    if (variant == "yield_await") return ex.block_on(ex.spawn(await_yield(count))).value();
    if (variant == "foreign_await") return run_foreign(count);
    if (variant == "spawn_join_future") {
      return ex.block_on(SpawnJoin(count, [](std::uint64_t i) { return ready_future(i); }));
    }
    if (variant == "spawn_join_coro") return ex.block_on(SpawnJoin(count, [](std::uint64_t i) { return returns(i); }));
    bench::die("unknown variant '" + variant
               + "' (ready_poll, ready_await, yield_poll, yield_await, foreign_await, spawn_join_future, "
                 "spawn_join_coro)");
  };
  once(n);  // warms the slab, the executor's queue and the handles' vector sizes
  std::uint64_t before = bench::mallocs.load();
  auto t0 = bench::Clock::now();
  std::uint64_t result = once(n);
  double seconds = bench::secs_since(t0);
  double per_op = static_cast<double>(bench::mallocs.load() - before) / static_cast<double>(n);
  bool sums = variant == "ready_poll" || variant == "ready_await" || variant.starts_with("spawn_join");
  std::uint64_t want = sums ? n * (n - 1) / 2 : n;
  if (result != want) bench::die("wrong result");
  bench::emit("coro", variant, n, seconds, {{"mallocs_per_op", per_op}});
}
