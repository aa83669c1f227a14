// The io_uring backend (src/io/ring.cpp, src/io/uring_stream.cpp,
// src/driver/worker_ring.cpp) compiled over the model checker's atomics and
// mutex, on a fake kernel (fake_uring.hpp), and run under every
// interleaving of a worker that owns the ring with the tasks on other
// threads that read, write and close a stream on it:
// - submission: a task on another thread stages an operation while the
//   worker is going to sleep in the ring; the worker is woken through its
//   eventfd and submits it;
// - completion: a receive's data wakes the reader; a send's result moves
//   the send buffer on;
// - cancellation: closing a stream cancels its receive and hands what is
//   left of its send buffer to the kernel, racing the operations'
//   completions;
// - drop: the stream is freed once, after the last operation came back,
//   and its fd closed then;
// - shutdown: a ring shut down while another thread stages leaves nothing
//   in the kernel.
// The invariants: nothing lost (bytes, wake-ups, submissions, provided
// buffers), nothing duplicated, nothing touched after it was freed.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <memory>
#include <span>
#include <string>

#include "../../src/driver/worker_ring.hpp"
#include "../../src/io/uring_stream.hpp"
#include "fake_uring.hpp"
#include "model_heap.hpp"
#include "model_task.hpp"

namespace {

using fake_uring::Sends;
using model_task::report;
using model_task::TaskWaker;
using pollux::detail::kDriverGone;
using pollux::detail::SysResult;
using pollux::detail::UringStream;
using pollux::detail::WorkerRing;

// What a scenario's kernel does, and whether it has a stream.
struct Setup {
  Sends sends = Sends::Whole;
  bool lends_buffers = true;
  bool with_stream = true;
};

// A connected stream socket whose one end goes on the ring, the worker
// thread that owns the ring, and the tasks' wakers.
struct World {
  Setup setup;
  int stream_fd = -1;
  int peer_fd = -1;
  pollux::Arc<WorkerRing> worker;
  UringStream* stream = nullptr;
  bool ready = false;  // the ring and the stream exist (read by block_until, so not an Atomic)
  pollux::detail::Atomic<bool> stopping{false};
  TaskWaker reader;
  TaskWaker writer;

  explicit World(Setup s = {}) : setup(s) {
    int fds[2];
    model::check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0, "socketpair failed");
    stream_fd = fds[0];
    peer_fd = fds[1];
  }
  ~World() {
    close(peer_fd);
    if (!setup.with_stream) close(stream_fd);
  }

  // What the peer has received, all of it, without waiting.
  std::string peer_received() const {
    std::string got;
    char buffer[64];
    for (ssize_t n; (n = recv(peer_fd, buffer, sizeof buffer, MSG_DONTWAIT)) > 0;) got.append(buffer, n);
    return got;
  }

  // The checks every scenario ends with: the stream was freed (its fd
  // closed), the kernel holds nothing, every provided buffer came back
  // once, and no waker was left behind.
  void check_all_returned() const {
    if (setup.with_stream) {
      model::check(fcntl(stream_fd, F_GETFD) < 0 && errno == EBADF, "the stream's fd was never closed (a leak)");
    }
    fake_uring::Kernel& kernel = fake_uring::current();
    model::check(kernel.in_kernel() == 0, "an operation was left in the kernel");
    model::check(kernel.buffers_free() == kernel.buffers_registered(),
                 "a provided buffer was lost, or given back twice");
    model::check(!reader.leaked() && !writer.leaked(), "a waker was left in the stream");
  }
};

// The worker: makes its ring and the stream, sleeps in the ring until told
// to stop (or not at all), and shuts it down, after which the kernel must
// hold nothing.
enum class Sleeps { UntilStopped, Never };
void run_worker(World& w, Sleeps sleeps = Sleeps::UntilStopped) {
  w.worker = pollux::make_arc<WorkerRing>(nullptr);
  fake_uring::current().sends = w.setup.sends;
  fake_uring::current().lends_buffers = w.setup.lends_buffers;
  if (w.setup.with_stream) w.stream = UringStream::open(w.worker->ring(), w.stream_fd);
  w.ready = true;
  while (sleeps == Sleeps::UntilStopped && !w.stopping.load()) w.worker->park();
  w.worker->end_thread();
  model::check(fake_uring::current().in_kernel() == 0, "an operation was left in the kernel after shutdown");
}

void wait_until_ready(World& w) {
  model::block_until([&w] { return w.ready; });
}

// The worker, and a task on another thread that starts once the ring and
// the stream exist.
model::Checker::Execution worker_and_task(std::shared_ptr<World> w, std::function<void()> task,
                                          Sleeps sleeps = Sleeps::UntilStopped) {
  model::Checker::Execution e;
  e.threads.push_back([w, sleeps] { run_worker(*w, sleeps); });
  e.threads.push_back([w, task = std::move(task)] {
    wait_until_ready(*w);
    task();
  });
  return e;
}

// What a runtime does when its tasks are done: stop the worker.
void stop(World& w) {
  w.stopping.store(true);
  w.worker->unpark();
}

// Polls `poll(cx)` as a task does until it is Ready, and returns its
// value: Pending puts the task to sleep until `task`'s waker is woken.
template <class PollFn>
SysResult poll_as_task(TaskWaker& task, PollFn poll) {
  pollux::Context cx{task.waker};
  for (;;) {
    int woken_before = task.woken();
    pollux::Poll<SysResult> result = poll(cx);
    if (result.is_ready()) return result.value();
    model::block_until([&task, woken_before] { return task.woken() > woken_before; });
    task.counts.woke.acquire();  // the poll a wake leads to happens after it
  }
}

SysResult read_some(World& w, std::span<std::byte> into) {
  return poll_as_task(w.reader, [&](pollux::Context& cx) { return w.stream->poll_read(&cx, into); });
}

// Writes all of `text`, a write at a time.
void write_all(World& w, std::string_view text) {
  while (!text.empty()) {
    std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(text.data()), text.size());
    std::span<const std::byte> buffers[] = {bytes};
    SysResult wrote = poll_as_task(w.writer, [&](pollux::Context& cx) { return w.stream->poll_write(&cx, buffers); });
    model::check(wrote.value > 0, "a write failed");
    if (wrote.value <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(wrote.value));
  }
}

// Flushes: until the kernel has every byte.
void flush(World& w) {
  SysResult flushed = poll_as_task(w.writer, [&](pollux::Context& cx) { return w.stream->poll_flush(cx); });
  model::check(flushed.error == 0, "a flush failed");
}

// The peer sends `text` (a scheduling point, as every send is here: the
// data arrives at once). It fails (EPIPE) once the stream was closed,
// which no scenario minds.
void peer_sends(World& w, const char* text) {
  (void)send(w.peer_fd, text, std::char_traits<char>::length(text), MSG_DONTWAIT | MSG_NOSIGNAL);
}

std::string as_text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// The peer sends a byte while a task on another thread reads it from the
// stream and closes the stream, and the worker sleeps in its ring.
std::uint64_t explore_a_read_of_the_peers_byte(Setup setup) {
  model::Checker checker(1);
  return checker.explore([setup] {
    auto w = std::make_shared<World>(setup);
    model::Checker::Execution e = worker_and_task(w, [w] {
      std::array<std::byte, 8> buffer;
      SysResult got = read_some(*w, buffer);
      model::check(got.value == 1 && as_text(std::span(buffer).first(1)) == "x",
                   "the reader did not get the peer's byte");
      w->stream->close();
      stop(*w);
    });
    e.threads.push_back([w] { peer_sends(*w, "x"); });
    e.finish = [w] { w->check_all_returned(); };
    return e;
  });
}

}  // namespace

TEST_CASE(
    "a receive staged from another thread while the worker goes to sleep is submitted, and its data wakes the reader") {
  report(explore_a_read_of_the_peers_byte(Setup{}));
}

TEST_CASE("a stream closed while its receive is in the kernel is freed once, after the cancelled receive came back") {
  model::Checker checker(1);
  report(checker.explore([] {
    auto w = std::make_shared<World>();
    model::Checker::Execution e = worker_and_task(w, [w] {
      pollux::Context cx{w->reader.waker};
      std::array<std::byte, 8> buffer;
      (void)w->stream->poll_read(&cx, buffer);  // arms the receive (or finds the byte)
      w->stream->close();
      stop(*w);
    });
    e.threads.push_back([w] { peer_sends(*w, "x"); });
    e.finish = [w] { w->check_all_returned(); };
    return e;
  }));
}

TEST_CASE("bytes written and the stream closed while their send is in the kernel reach the peer once, in order") {
  for (Sends sends : {Sends::Whole, Sends::ByteAtATime, Sends::NotUntilCancelled}) {
    // The send the close must cancel gets the deeper search.
    model::Checker checker(sends == Sends::NotUntilCancelled ? 2 : 1);
    report(checker.explore([sends] {
      auto w = std::make_shared<World>(Setup{.sends = sends});
      model::Checker::Execution e = worker_and_task(w, [w] {
        write_all(*w, "abc");
        w->stream->close();
        stop(*w);
      });
      e.finish = [w] {
        model::check(w->peer_received() == "abc", "the peer did not get the bytes written, once, in order");
        w->check_all_returned();
      };
      return e;
    }));
  }
}

TEST_CASE("a flush is woken by the send that gives the kernel its last byte") {
  for (Sends sends : {Sends::Whole, Sends::ByteAtATime}) {
    model::Checker checker(1);
    report(checker.explore([sends] {
      auto w = std::make_shared<World>(Setup{.sends = sends});
      model::Checker::Execution e = worker_and_task(w, [w] {
        write_all(*w, "abc");
        flush(*w);
        model::check(w->peer_received() == "abc", "a flush returned before the kernel had every byte");
        w->stream->close();
        stop(*w);
      });
      e.finish = [w] { w->check_all_returned(); };
      return e;
    }));
  }
}

TEST_CASE(
    "a ring shut down while another thread stages a receive leaves nothing in the kernel, and the reader learns the driver is gone") {
  model::Checker checker(1);
  report(checker.explore([] {
    auto w = std::make_shared<World>();
    model::Checker::Execution e = worker_and_task(
        w,
        [w] {
          std::array<std::byte, 8> buffer;
          SysResult got = read_some(*w, buffer);
          model::check(got.value == -1 && got.error == kDriverGone, "a read on a shut-down ring did not fail");
          w->stream->close();
        },
        Sleeps::Never);
    e.finish = [w] { w->check_all_returned(); };
    return e;
  }));
}

TEST_CASE(
    "with every provided buffer lent out, a receive falls back to the stream's own buffer and its bytes reach the reader") {
  report(explore_a_read_of_the_peers_byte(Setup{.lends_buffers = false}));
}

TEST_CASE("a reader and a writer staging at once from two threads while the worker sleeps are both submitted") {
  model::Checker checker(1);
  report(checker.explore([] {
    auto w = std::make_shared<World>();
    model::check(send(w->peer_fd, "x", 1, 0) == 1, "the peer's send failed");
    auto finished = std::make_shared<pollux::detail::Atomic<int>>(0);
    // The second task to finish closes the stream and stops the worker.
    auto done = [w, finished] {
      if (finished->fetch_add(1) == 1) {
        w->stream->close();
        stop(*w);
      }
    };
    model::Checker::Execution e;
    e.threads.push_back([w] { run_worker(*w); });
    e.threads.push_back([w, done] {
      wait_until_ready(*w);
      std::array<std::byte, 8> buffer;
      SysResult got = read_some(*w, buffer);
      model::check(got.value == 1, "the reader did not get the peer's byte");
      done();
    });
    e.threads.push_back([w, done] {
      wait_until_ready(*w);
      write_all(*w, "y");
      done();
    });
    e.finish = [w] {
      model::check(w->peer_received() == "y", "the peer did not get the byte written");
      w->check_all_returned();
    };
    return e;
  }));
}

TEST_CASE("an unpark while the worker drains its eventfd leaves the next unpark able to wake it") {
  model::Checker checker(1);
  report(checker.explore([] {
    auto w = std::make_shared<World>(Setup{.with_stream = false});
    model::Checker::Execution e = worker_and_task(w, [w] { w->worker->unpark(); });
    e.threads.push_back([w] {
      wait_until_ready(*w);
      w->worker->unpark();
      // The stop comes once the worker sleeps again, so only the eventfd can wake it.
      model::block_until([] { return fake_uring::current().sleeping(); });
      stop(*w);
    });
    e.finish = [w] { w->check_all_returned(); };
    return e;
  }));
}

TEST_CASE("operations staged from another thread after the submission queue filled wait in the backlog, none lost") {
  // The model's queue has 4 entries: the worker's eventfd poll, a receive,
  // a send and the close's two cancellations make 5, so a worker that has
  // not submitted yet finds the last of them in the backlog; the
  // cancellation of a receive still there completes it without the kernel.
  model::Checker checker(1);
  report(checker.explore([] {
    auto w = std::make_shared<World>();
    model::Checker::Execution e = worker_and_task(w, [w] {
      std::array<std::byte, 8> buffer;
      pollux::Context cx{w->reader.waker};
      model::check(w->stream->poll_read(&cx, buffer).is_pending(), "a read found bytes nobody sent");
      write_all(*w, "y");
      w->stream->close();
      stop(*w);
    });
    e.finish = [w] {
      model::check(w->peer_received() == "y", "the peer did not get the byte written");
      w->check_all_returned();
    };
    return e;
  }));
}
