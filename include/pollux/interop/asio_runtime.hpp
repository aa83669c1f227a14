// AsioRuntime: a current-thread pollux runtime run by an asio::io_context,
// on the thread that runs it, with no thread of its own and no busy loop.
// Its tasks run in handlers of the io_context, a batch at a time
// (Runtime::turn); between batches the io_context waits on the runtime's
// wait_fd(), which a due timer, a ready socket or a wake from any thread
// makes readable (rule 6: wakes come from anywhere). Needs Asio (Debian:
// libasio-dev); pollux's library never includes this header.
//
// Why this direction: Asio's scheduler signals its reactor when work is
// posted while a thread waits in run(), but not when no thread runs it, so
// an io_context run from a pollux task would miss work posted from outside
// it; a pollux runtime's wait_fd() is readable for every kind of wake.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <poll.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "pollux/core/future.hpp"
#include "pollux/runtime/runtime.hpp"
#include "pollux/task/join_handle.hpp"

namespace pollux {

/// A current-thread pollux runtime whose loop is an asio::io_context's:
/// its tasks run in the io_context's handlers, on the thread that calls
/// ioc.run(). Make it, spawn on it and destroy it on that thread.
class AsioRuntime {
 public:
  /// A runtime (current-thread, its sockets on epoll, which turn() needs)
  /// run by `ioc`. `tasks_per_turn` tasks at most run in one handler, so
  /// that Asio's own handlers get their turn in between. Throws what
  /// Runtime::current_thread throws, and std::invalid_argument for 0.
  explicit AsioRuntime(asio::io_context& ioc, RuntimeOptions options = {}, std::size_t tasks_per_turn = 61)
      : runtime_(make_runtime(std::move(options))),
        loop_(std::make_shared<Loop>(ioc, runtime_, checked(tasks_per_turn))) {
    runtime_.set_outside_waker(Waker::from_raw(RawWaker{loop_.get(), &Loop::kTurnWaker}));
    loop_->schedule_turn();
  }
  AsioRuntime(const AsioRuntime&) = delete;
  AsioRuntime& operator=(const AsioRuntime&) = delete;
  /// Stops watching the runtime, then destroys it (its tasks are
  /// cancelled: each future is destroyed here). A handler of the
  /// io_context still queued for it does nothing when it runs.
  ~AsioRuntime() { stop(); }

  /// Not a future, given to spawn: a compile error that says what it is.
  template <class F>
  requires(!Future<F>) detail::Misused spawn(F, std::string_view = {}) {
    detail::not_a_future<F>();
    return {};
  }
  /// Spawns `future` on the runtime; it first runs in the io_context's next
  /// turn. From the io_context's thread.
  template <Future F>
  JoinHandle<output_t<F>> spawn(F future, std::string_view name = {}) {
    JoinHandle<output_t<F>> handle = runtime_.spawn(std::move(future), name);
    loop_->schedule_turn();
    return handle;
  }

  /// Stops watching the runtime: no task runs from now on, and the
  /// io_context's run() no longer waits for it. Idempotent.
  void stop() noexcept { loop_->stop(); }

  /// The runtime (its driver, metrics, blocking pool).
  Runtime& runtime() noexcept { return runtime_; }

 private:
  // The part the io_context's handlers hold: it outlives the AsioRuntime
  // while one of them is queued, and after stop() they touch nothing else.
  struct Loop : std::enable_shared_from_this<Loop> {
    Loop(asio::io_context& context, Runtime& rt, std::size_t batch)
        : ioc(context), runtime(&rt), tasks_per_turn(batch), fd(context, rt.wait_fd()) {}
    ~Loop() {
      if (fd.is_open()) (void)fd.release();  // never closed here: the runtime owns it
    }

    // A turn posted to the io_context, unless one is queued already.
    void schedule_turn() {
      if (turn_queued || runtime == nullptr) return;
      turn_queued = true;
      asio::post(ioc, [self = shared_from_this()] {
        self->turn_queued = false;
        self->run_turn();
      });
    }

    void run_turn() {
      if (runtime == nullptr) return;
      bool more = runtime->turn(tasks_per_turn);
      if (runtime == nullptr) return;  // a task stopped the loop
      if (more) {
        schedule_turn();  // after the io_context's other handlers
      } else {
        wait();
      }
    }

    // Waits for wait_fd() to be readable. Asio watches it edge-triggered, so
    // readiness that came before the wait was armed is looked for by hand.
    void wait() {
      if (wait_armed) return;
      wait_armed = true;
      fd.async_wait(asio::posix::stream_descriptor::wait_read, [self = shared_from_this()](asio::error_code) {
        self->wait_armed = false;
        self->run_turn();
      });
      pollfd ready{fd.native_handle(), POLLIN, 0};
      if (::poll(&ready, 1, 0) > 0) schedule_turn();
    }

    // The runtime's outside waker: a task woken from this thread while the
    // runtime waits posts a turn here, without the eventfd's two system
    // calls. It points at the Loop without owning it; stop() takes it back
    // from the runtime first.
    static RawWaker clone_turn(const void* self) noexcept { return RawWaker{self, &kTurnWaker}; }
    static void wake_turn(const void* self) noexcept { static_cast<Loop*>(const_cast<void*>(self))->schedule_turn(); }
    static void drop_turn(const void*) noexcept {}
    static constexpr RawWakerVTable kTurnWaker{&clone_turn, &wake_turn, &wake_turn, &drop_turn};

    // The wait is cancelled, and the fd given back before the runtime
    // closes it: it is the driver's epoll instance, not Asio's to close.
    void stop() noexcept {
      if (runtime == nullptr) return;
      try {
        runtime->set_outside_waker(std::nullopt);
      } catch (const std::logic_error&) {
        // stopped from another thread: the waker stays, and does nothing once runtime is null
      }
      runtime = nullptr;
      asio::error_code ignored;
      fd.cancel(ignored);
      (void)fd.release();
    }

    asio::io_context& ioc;
    Runtime* runtime;  // null once stopped
    std::size_t tasks_per_turn;
    asio::posix::stream_descriptor fd;
    bool turn_queued = false;
    bool wait_armed = false;
  };

  static std::size_t checked(std::size_t tasks_per_turn) {
    if (tasks_per_turn == 0) throw std::invalid_argument("pollux::AsioRuntime: tasks_per_turn is 0");
    return tasks_per_turn;
  }

  static Runtime make_runtime(RuntimeOptions options) {
    options.io_backend = IoBackend::Epoll;
    return Runtime::current_thread(std::move(options));
  }

  Runtime runtime_;
  std::shared_ptr<Loop> loop_;
};

}  // namespace pollux
