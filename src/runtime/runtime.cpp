// Building the two kinds of runtime: the executor gets the driver as the
// IdleDriver it sleeps in, and every thread that runs tasks gets it installed.
#include "pollux/runtime/runtime.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <stdexcept>
#include <string>
#include <thread>

#include "pollux/io/detail/resolve.hpp"
#include "pollux/runtime/console_snapshot.hpp"
#include "pollux/runtime/lookup_host.hpp"

namespace pollux {

namespace {
// A new runtime's blocking pool. Building one also installs the resolver
// that TcpStream::connect uses for a host name, which runs there.
std::unique_ptr<BlockingPool> make_blocking_pool() {
  detail::install_resolver(&detail::resolve_on_blocking_pool);
  return std::make_unique<BlockingPool>();
}
}  // namespace

Runtime Runtime::current_thread(RuntimeOptions runtime_options) {
  Runtime rt;
  rt.driver_ = std::make_unique<Driver>(runtime_options.io_backend, true);
  rt.blocking_ = make_blocking_pool();
  LocalExecutorOptions options;
  options.unhandled_exception = runtime_options.unhandled_exception;
  options.lost_wake = runtime_options.lost_wake;
  options.histograms = runtime_options.histograms;
  rt.local_ = std::make_unique<LocalExecutor>(rt.driver_->park_handle(), options);
  rt.open_console(runtime_options);
  return rt;
}

Runtime Runtime::multi_thread(std::size_t workers, RuntimeOptions runtime_options) {
  if (workers == 0) throw std::invalid_argument("pollux::Runtime::multi_thread: needs at least one worker, got 0");
  Runtime rt;
  rt.driver_ = std::make_unique<Driver>(runtime_options.io_backend, false);
  rt.blocking_ = make_blocking_pool();
  detail::DriverCore* driver = &rt.driver_->core();
  BlockingPool* blocking = rt.blocking_.get();
  ThreadPoolOptions options;
  options.driver = rt.driver_->park_handle();
  options.unhandled_exception = runtime_options.unhandled_exception;
  options.lost_wake = runtime_options.lost_wake;
  options.histograms = runtime_options.histograms;
  // A worker's whole life: no scope outlives the thread to put values back.
  options.on_thread_start = [driver, blocking] {
    driver->install();
    detail::runtime_context().blocking_pool = blocking;
  };
  options.on_thread_stop = [] {
    detail::DriverCore::uninstall();
    detail::runtime_context().blocking_pool = nullptr;
  };
  rt.pool_ = std::make_unique<ThreadPool>(workers, std::move(options));
  rt.open_console(runtime_options);
  return rt;
}

Runtime Runtime::multi_thread(RuntimeOptions options) {
  unsigned cores = std::thread::hardware_concurrency();
  return multi_thread(cores == 0 ? 1 : cores, options);
}

Runtime::~Runtime() { shut_down(); }

bool Runtime::turn(std::size_t max_tasks) {
  check_alive("turn");
  if (!local_) {
    throw std::logic_error(
        "pollux::Runtime::turn: a multi-thread runtime runs its tasks on its own workers; turn drives a "
        "current-thread runtime");
  }
  Guard guard = enter();
  return local_->turn(max_tasks);
}

void Runtime::set_outside_waker(std::optional<Waker> waker) {
  check_alive("set_outside_waker");
  if (!local_) throw std::logic_error("pollux::Runtime::set_outside_waker: a current-thread runtime's only");
  local_->set_outside_waker(std::move(waker));
}

void Runtime::check_alive(const char* what) const {
  if (local_ || pool_) return;
  throw std::logic_error(std::string("pollux::Runtime::") + what
                         + (driver_ ? ": the runtime is shutting down (called from a task's destructor, say)"
                                    : ": the runtime was moved from (or destroyed); use the one it was moved to"));
}

namespace {
// A runtime's metrics from its parts (one of `local` and `pool` is null):
// what metrics() returns and what the console sends.
RuntimeMetrics metrics_of(const LocalExecutor* local, const ThreadPool* pool, const Driver& driver,
                          const BlockingPool& blocking) {
  RuntimeMetrics out;
  out.executor = local != nullptr ? local->metrics() : pool->metrics();
  out.driver = driver.metrics();
  out.blocking = blocking.metrics();
  return out;
}
}  // namespace

RuntimeMetrics Runtime::metrics() const { return metrics_of(local_.get(), pool_.get(), *driver_, *blocking_); }

void Runtime::open_console(const RuntimeOptions& options) {
  std::string path = options.console_socket;
  bool from_environment = path.empty();
  if (from_environment) {
    const char* env = std::getenv("POLLUX_CONSOLE");
    if (env == nullptr || *env == '\0') return;
    path = env;
  }
  // The parts, not `this`: a Runtime may move, its parts stay where they are.
  auto snapshot = [local = local_.get(), pool = pool_.get(), driver = driver_.get(), blocking = blocking_.get()] {
    ConsoleSnapshot s;
    s.metrics = metrics_of(local, pool, *driver, *blocking);
    if (local) {
      // Listed in slices between the executor's batches: a million tasks
      // take about a second, without holding the executor for that long.
      s.tasks = local->tasks_within(std::chrono::seconds(1));
    } else {
      s.tasks = pool->tasks();
    }
    return format_console_snapshot(s);
  };
  try {
    console_ = std::make_unique<detail::ConsoleServer>(path, std::move(snapshot));
  } catch (const std::exception& error) {
    if (!from_environment) throw;
    std::fprintf(stderr, "pollux: POLLUX_CONSOLE: no console (%s)\n", error.what());
  }
}

Runtime& Runtime::operator=(Runtime&& other) noexcept {
  if (this == &other) return *this;
  // Member-wise assignment would replace the driver first, then the pool,
  // while the old workers still run tasks that use both.
  shut_down();
  driver_ = std::move(other.driver_);
  blocking_ = std::move(other.blocking_);
  local_ = std::move(other.local_);
  pool_ = std::move(other.pool_);
  console_ = std::move(other.console_);
  return *this;
}

void Runtime::shut_down() noexcept {
  // The executors go first, whatever the declaration order says, then the
  // blocking threads (their jobs may wake tasks, which are gone by then),
  // then the driver the tasks' timers and sockets were registered with.
  // The console reads them all: it stops before any goes.
  console_.reset();
  pool_.reset();
  local_.reset();
  blocking_.reset();
  driver_.reset();
}

}  // namespace pollux
