// Counts heap allocations: one per spawned task, none per wake or poll.
#include <doctest/doctest.h>

#include "counting_allocator.hpp"
#include "support.hpp"

using namespace pollux;

TEST_CASE("spawning costs exactly one allocation per task, and polls and wakes cost none") {
  LocalExecutor ex;
  ex.block_on(yield_now());  // thread-locals and the executor's own set-up
  constexpr int n = 1000;
  std::vector<JoinHandle<void>> handles;
  handles.reserve(n);
  long before = test::allocations;
  for (int i = 0; i < n; ++i) {
    // Each task yields three times: three wakes, four polls.
    handles.push_back(ex.spawn(then(yield_now(), [] { return then(yield_now(), [] { return yield_now(); }); })));
  }
  CHECK(test::allocations - before == n);
  ex.run();
  CHECK(test::allocations - before == n);
}
