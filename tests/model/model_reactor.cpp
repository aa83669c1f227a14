// The reactor's readiness slot (io/detail/reactor.hpp, src/io/reactor.cpp),
// compiled over the model checker's atomics and mutex and run under every
// interleaving of a socket's reader with the driver thread that dispatches
// its epoll event: poll_ready against set_readiness, clear_readiness after
// EAGAIN against an event that arrives meanwhile (the tick), and a socket
// that deregisters while an event for it is still in flight (the
// generation). The invariants: no edge is lost (a reader asleep with data
// waiting is a deadlock); an event meant for a closed registration never
// reaches the next one in the same slot; no waker is left behind.
#include <doctest/doctest.h>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <memory>

#include "model_task.hpp"
#include "pollux/io/detail/reactor.hpp"

namespace {

using model_task::report;
using model_task::TaskWaker;
using pollux::Interest;
using pollux::detail::Reactor;
using pollux::detail::ScheduledIo;

// A real reactor (an epoll instance) with one registered eventfd, whose
// token is read back from the kernel, as the driver would get it.
struct World {
  pollux::Arc<Reactor> reactor = pollux::make_arc<Reactor>();
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  ScheduledIo* io = nullptr;
  std::uint64_t token = 0;
  pollux::detail::Atomic<int> data{0};  // what the socket has to read
  TaskWaker reader;

  explicit World(bool start_ready) { reg(start_ready); }
  ~World() {
    if (io != nullptr) reactor->remove(*io, fd);
    close(fd);
  }
  void reg(bool start_ready) {
    io = &reactor->add(fd, start_ready);
    epoll_event event{};
    int events = epoll_wait(reactor->epoll_fd(), &event, 1, 0);  // an eventfd is writable at once
    model::check(events == 1, "epoll reported no event for a writable eventfd");
    token = event.data.u64;
  }
};

// Reads as a socket's read future does: wait for readiness, try the read,
// and on EAGAIN clear the readiness seen and wait again.
void read_once(World& w) {
  pollux::Context cx{w.reader.waker};
  for (;;) {
    int woken_before = w.reader.woken();
    auto ready = w.io->poll_ready(cx, Interest::Read);
    if (ready.is_pending()) {
      model::block_until([&w, woken_before] { return w.reader.woken() > woken_before; });
      w.reader.counts.woke.acquire();  // the poll a wake leads to happens after it
      continue;
    }
    if (w.data.exchange(0) == 1) return;   // read it
    w.io->clear_readiness(ready.value());  // EAGAIN
  }
}

// The peer writes, and the driver dispatches the edge it caused.
void deliver(World& w) {
  w.data.store(1);
  w.reactor->dispatch(w.token, EPOLLIN);
}

}  // namespace

TEST_CASE("a socket's reader racing the event of its data never misses the edge, starting ready or not") {
  for (bool start_ready : {true, false}) {
    model::Checker checker(3);
    report(checker.explore([start_ready] {
      auto w = std::make_shared<World>(start_ready);
      model::Checker::Execution e;
      e.threads.push_back([w] { read_once(*w); });
      e.threads.push_back([w] { deliver(*w); });
      e.finish = [w] {
        w->io->abandon(Interest::Read);
        model::check(!w->reader.leaked(), "a waker was left in the slot");
      };
      return e;
    }));
  }
}

TEST_CASE("an event in flight for a socket that deregistered never reaches the next socket in its slot") {
  model::Checker checker(3);
  report(checker.explore([] {
    auto w = std::make_shared<World>(false);
    std::uint64_t stale = w->token;
    model::Checker::Execution e;
    e.threads.push_back([w] {
      w->reactor->remove(*w->io, w->fd);
      w->io = nullptr;
      w->reg(false);  // the slot again, a new generation
      pollux::Context cx{w->reader.waker};
      (void)w->io->poll_ready(cx, Interest::Read);
    });
    e.threads.push_back([w, stale] { w->reactor->dispatch(stale, EPOLLIN); });
    e.finish = [w] {
      model::check(w->io->ready_now(Interest::Read).ready == 0, "a stale event set the new socket's readiness");
      model::check(w->reader.woken() == 0, "a stale event woke the new socket's reader");
      w->io->abandon(Interest::Read);
      model::check(!w->reader.leaked(), "a waker was left in the slot");
    };
    return e;
  }));
}
