// The wake routes of a split TlsStream (tls/detail/split_routes.hpp),
// compiled over the model checker's atomics and mutex and run under every
// schedule within the bound. Both halves wait on the same direction of the
// stream under TLS (a read half sending what a write half queued), which
// keeps one waker for that direction, as a socket does. The invariant: the
// readiness that comes wakes both halves; neither is left waiting for ever.
#include <doctest/doctest.h>

#include <memory>

#include "model_task.hpp"
#include "pollux/core/atomic_waker.hpp"
#include "pollux/core/context.hpp"
#include "pollux/tls/detail/split_routes.hpp"
#include "support.hpp"

namespace {

using pollux::Context;
using pollux::Interest;
using pollux::Poll;
using pollux::Waker;
using pollux::tls::detail::Half;
using pollux::tls::detail::SplitRoutes;

struct World {
  pollux::Arc<SplitRoutes> routes = pollux::make_arc<SplitRoutes>();
  pollux::detail::Mutex lock;        // the halves' turns, as TlsSplitState takes them
  pollux::AtomicWaker stream_waker;  // the stream's one waker for its write direction
  pollux::detail::Atomic<bool> room{false};
  test::Counts reader, writer;
};

// One half polls as its task does: under the lock, through the routes, the
// stream stores the waker it is given and looks for room; short of it, the
// task waits to be woken, then polls again. A lost wake leaves it waiting
// for ever (the checker's deadlock).
void half(World& w, Half which, test::Counts& counts) {
  for (;;) {
    int woken_before = counts.woken();
    std::uint64_t writes_before = model::detail::writes;
    bool done;
    {
      pollux::detail::MutexLock turn(w.lock);
      Waker mine = test::counting_waker(counts);
      Context cx(mine);
      done = w.routes
                 ->poll(cx, which, Interest::Write,
                        [&](Context& routed) -> Poll<int> {
                          w.stream_waker.register_waker(routed.waker());
                          if (w.room.load()) return Poll<int>(std::in_place, 1);
                          return pollux::pending;
                        })
                 .is_ready();
    }
    if (done) return;
    model::block_until([&counts, woken_before, writes_before] {
      return counts.woken() > woken_before && model::detail::writes != writes_before;
    });
    counts.woke.acquire();  // the poll a wake leads to happens after it
  }
}

// The stream's side: room comes, and it wakes the waker it keeps.
void make_room(World& w) {
  w.room.store(true);
  w.stream_waker.wake_by_ref();
}

}  // namespace

TEST_CASE("split halves waiting on one direction of the stream are both woken, in any order") {
  model::Checker checker(3);
  std::uint64_t runs = checker.explore([] {
    auto w = std::make_shared<World>();
    model::Checker::Execution e;
    e.threads.push_back([w] { half(*w, Half::Reader, w->reader); });
    e.threads.push_back([w] { half(*w, Half::Writer, w->writer); });
    e.threads.push_back([w] { make_room(*w); });
    e.finish = [w] { (void)w->stream_waker.take(); };
    return e;
  });
  model_task::report(runs);
}
