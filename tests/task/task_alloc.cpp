// Counts allocations: one per spawned task, from the slab (or the allocator
// given to make_task); none per wake or poll; and, once the slab is warm,
// none from malloc at all.
#include <doctest/doctest.h>

#include <thread>

#include "counting_allocator.hpp"
#include "support.hpp"

using namespace pollux;

namespace {

// A standard allocator that counts what it hands out and takes back.
struct AllocatorCounts {
  int allocated = 0;
  int deallocated = 0;
};

template <class T>
struct CountingAllocator {
  using value_type = T;
  AllocatorCounts* counts;
  explicit CountingAllocator(AllocatorCounts* c) noexcept : counts(c) {}
  template <class U>
  CountingAllocator(const CountingAllocator<U>& other) noexcept : counts(other.counts) {}
  T* allocate(std::size_t n) {
    ++counts->allocated;
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    ++counts->deallocated;
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const CountingAllocator<U>& other) const noexcept {
    return counts == other.counts;
  }
};

// Three yields: three wakes, four polls.
auto three_yields() {
  return then(yield_now(), [] { return then(yield_now(), [] { return yield_now(); }); });
}

}  // namespace

TEST_CASE("a task is one allocation from the allocator given to make_task, freed when the last reference goes") {
  AllocatorCounts counts;
  std::vector<Runnable> queue;
  {
    auto [runnable, handle] = make_task(std::allocator_arg, CountingAllocator<std::byte>(&counts), three_yields(),
                                        [&queue](Runnable r) { queue.push_back(std::move(r)); });
    CHECK(counts.allocated == 1);
    queue.reserve(4);
    long before = test::allocations;
    runnable.run();
    while (!queue.empty()) {
      Runnable next = std::move(queue.back());
      queue.pop_back();
      next.run();
    }
    CHECK(test::allocations - before == 0);  // three wakes and four polls: nothing
    CHECK(handle.is_finished());
    CHECK(counts.deallocated == 0);  // the handle still holds it
  }
  CHECK(counts.allocated == 1);
  CHECK(counts.deallocated == 1);
}

TEST_CASE("once the slab is warm, spawning, polling and finishing tasks allocates nothing from malloc") {
  LocalExecutor ex;
  constexpr int n = 1000;
  std::vector<JoinHandle<void>> handles;
  handles.reserve(n);
  auto round = [&] {
    for (int i = 0; i < n; ++i) handles.push_back(ex.spawn(three_yields()));
    ex.run();
    handles.clear();  // keeps its capacity
  };
  round();  // warms the slab, the executor and the thread-locals
  long before = test::allocations;
  std::size_t chunks = detail::slab_chunks();
  round();
  if (detail::kSlabEnabled) {
    CHECK(test::allocations - before == 0);
    CHECK(detail::slab_chunks() == chunks);
  } else {
    CHECK(test::allocations - before == n);  // AddressSanitizer: one operator new per task instead
  }
}

TEST_CASE("a task freed on another thread goes back to the slab of the thread that made it") {
  if (!detail::kSlabEnabled) return;  // AddressSanitizer: tasks come from operator new
  constexpr int n = 2000;
  std::vector<Runnable> made;
  std::vector<JoinHandle<int>> handles;
  auto make_all = [&] {
    for (int i = 0; i < n; ++i) {
      auto [runnable, handle] = make_task(ready_future(i), [](Runnable) {});
      made.push_back(std::move(runnable));
      handles.push_back(std::move(handle));
    }
  };
  make_all();
  std::thread([&] {  // runs and frees every task over there
    for (auto& r : made) r.run();
    made.clear();
    handles.clear();
  })
      .join();
  std::size_t chunks = detail::slab_chunks();
  make_all();  // the same blocks again, taken back from the remote list
  CHECK(detail::slab_chunks() == chunks);
  made.clear();
  handles.clear();
}

TEST_CASE("once warm, a thread pool's spawns and joins allocate nothing from malloc") {
  ThreadPool pool(2);
  constexpr std::size_t n = 5000;
  std::vector<JoinHandle<std::size_t>> handles;
  handles.reserve(n);
  auto round = [&] {
    return pool.block_on(poll_fn<std::size_t>(
        [&, next = std::size_t{0}, sum = std::size_t{0}](Context& cx) mutable -> Poll<std::size_t> {
          if (handles.empty()) {
            for (std::size_t i = 0; i < n; ++i) handles.push_back(pollux::spawn(ready_future(i)));
          }
          for (; next < handles.size(); ++next) {
            auto v = handles[next].poll(cx);
            if (v.is_pending()) return pending;
            sum += v.value().value();
          }
          handles.clear();
          return ready(sum);
        }));
  };
  CHECK(round() == n * (n - 1) / 2);
  CHECK(round() == n * (n - 1) / 2);  // every worker and the block_on thread warm now
  long before = test::allocations;
  CHECK(round() == n * (n - 1) / 2);
  if (detail::kSlabEnabled) {
    CHECK(test::allocations - before == 0);
  } else {
    CHECK(test::allocations - before == static_cast<long>(n));
  }
}
