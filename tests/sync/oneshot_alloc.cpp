// Counts heap allocations: a oneshot channel costs exactly one block (from
// the thread's slab), and sending, receiving and waking cost none.
#include <doctest/doctest.h>

#include "counting_allocator.hpp"
#include "support.hpp"

using namespace pollux;

TEST_CASE("a oneshot channel costs one block of the slab, and send, poll and wake cost none") {
  auto [tx, rx] = oneshot::channel<int>();  // warm up thread-locals and the slab outside the count
  (void)tx.send(0);
  (void)block_on(std::move(rx));

  test::Probe probe;
  long before = test::allocations;
  std::size_t chunks = detail::slab_chunks();
  auto [tx2, rx2] = oneshot::channel<int>();
  // From the slab: no operator new, and the freed channel's block again,
  // not a new chunk. (Under AddressSanitizer the slab is off: one operator new.)
  long expected = detail::kSlabEnabled ? 0 : 1;
  CHECK(test::allocations - before == expected);
  CHECK(detail::slab_chunks() == chunks);
  CHECK(rx2.poll(probe.cx).is_pending());
  (void)tx2.send(5);
  CHECK(rx2.poll(probe.cx).value() == std::optional<int>(5));
  CHECK(test::allocations - before == expected);
}

TEST_CASE("block_on allocates nothing per poll or wake") {
  (void)block_on(yield_now());  // the thread's parker is made on first use
  long before = test::allocations;
  for (int i = 0; i < 100; ++i) block_on(yield_now());
  CHECK(test::allocations - before == 0);
}
