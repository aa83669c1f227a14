// A worker pool fed by a bounded queue: a producer sends jobs into an
// mpsc channel of capacity 4, three worker tasks take them (sharing the
// receiver behind a Mutex), a Semaphore lets at most two jobs run at once,
// and each result goes back through the job's oneshot. The queue is small
// and the work slow, so the producer has to wait for room: backpressure.
#include <pollux/pollux.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kJobs = 20;
constexpr std::size_t kQueue = 4, kWorkers = 3, kRunning = 2;

struct Job {
  std::uint64_t n;
  pollux::oneshot::Sender<std::uint64_t> reply;
};

struct Pool {
  pollux::Mutex<pollux::mpsc::Receiver<Job>> queue;
  pollux::Semaphore running{kRunning};
  std::atomic<int> now_running{0}, most_running{0};
  explicit Pool(pollux::mpsc::Receiver<Job> rx) : queue(std::move(rx)) {}
};

// A worker: take the queue's lock, receive a job, let go of the lock; get
// a permit to run; work (a 10 ms sleep); reply; give the permit back.
class Worker {
 public:
  using Output = std::uint64_t;  // how many jobs it did
  explicit Worker(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

  pollux::Poll<std::uint64_t> poll(pollux::Context& cx) {
    for (;;) {
      switch (state_) {
        case State::Locking: {
          POLLUX_TRY_READY_ASSIGN(auto guard, lock_.poll(cx, [&] { return pool_->queue.lock(); }));
          guard_.emplace(std::move(guard));
          state_ = State::Receiving;
          break;
        }
        case State::Receiving: {
          // Holds the queue's lock while it waits, as the tutorial's workers do.
          POLLUX_TRY_READY_ASSIGN(auto job, (*guard_)->poll_recv(cx));
          guard_.reset();
          if (!job) return pollux::ready(done_);  // the producer is done and the queue is empty
          job_.emplace(std::move(*job));
          acquire_.start(pool_->running.acquire());
          state_ = State::Acquiring;
          break;
        }
        case State::Acquiring: {
          POLLUX_TRY_READY_ASSIGN(auto permit, acquire_.poll(cx));
          permit_.emplace(std::move(permit.value()));
          int running = pool_->now_running.fetch_add(1) + 1;
          int most = pool_->most_running.load();
          while (running > most && !pool_->most_running.compare_exchange_weak(most, running)) {
          }
          work_.start(pollux::sleep(10ms));
          state_ = State::Working;
          break;
        }
        case State::Working: {
          POLLUX_TRY_READY(work_.poll(cx));
          pool_->now_running.fetch_sub(1);
          (void)job_->reply.send(job_->n * job_->n);
          job_.reset();
          permit_.reset();  // the next job may run
          ++done_;
          state_ = State::Locking;
          break;
        }
      }
    }
  }

 private:
  enum class State { Locking, Receiving, Acquiring, Working };
  std::shared_ptr<Pool> pool_;
  State state_ = State::Locking;
  // The futures in flight: each slot empties itself once its future is Ready.
  pollux::FutureSlot<decltype(pool_->queue)::Lock> lock_;
  std::optional<pollux::MutexGuard<pollux::mpsc::Receiver<Job>>> guard_;
  std::optional<Job> job_;
  pollux::FutureSlot<pollux::Semaphore::Acquire> acquire_;
  std::optional<pollux::SemaphorePermit> permit_;
  pollux::FutureSlot<pollux::Sleep> work_;
  std::uint64_t done_ = 0;
};

// The producer: sends kJobs jobs, counting the sends that had to wait for
// room; then drops its sender (so the workers see the end) and awaits every
// reply. Ready with (sum of results, sends that waited).
class Producer {
 public:
  using Output = std::pair<std::uint64_t, std::uint64_t>;
  explicit Producer(pollux::mpsc::Sender<Job> tx) : tx_(std::move(tx)) {}

  pollux::Poll<Output> poll(pollux::Context& cx) {
    while (next_ < kJobs) {
      if (!send_) {
        auto [reply, reply_rx] = pollux::oneshot::channel<std::uint64_t>();
        replies_.push_back(std::move(reply_rx));
        send_.emplace(tx_->send(Job{next_ + 1, std::move(reply)}));
        first_poll_ = true;
      }
      auto sent = send_->poll(cx);
      if (sent.is_pending()) {
        if (first_poll_) {
          ++waited_;
          std::printf("  producer: queue full at job %llu, waiting for room\n",
                      static_cast<unsigned long long>(next_ + 1));
        }
        first_poll_ = false;
        return pollux::pending;
      }
      if (!sent.value()) return pollux::ready(Output{0, waited_});  // the workers are gone
      send_.reset();
      ++next_;
    }
    tx_.reset();  // no more jobs: the queue ends once drained
    POLLUX_TRY_READY_ASSIGN(auto results, results_.poll(cx, [&] { return pollux::join_all(std::move(replies_)); }));
    std::uint64_t sum = 0;
    for (auto& r : results) sum += r.value_or(0);
    return pollux::ready(Output{sum, waited_});
  }

 private:
  std::optional<pollux::mpsc::Sender<Job>> tx_;
  std::optional<pollux::mpsc::Sender<Job>::Send> send_;
  std::vector<pollux::oneshot::Receiver<std::uint64_t>> replies_;
  pollux::FutureSlot<pollux::JoinAll<pollux::oneshot::Receiver<std::uint64_t>>> results_;
  std::uint64_t next_ = 0, waited_ = 0;
  bool first_poll_ = false;
};

}  // namespace

int main() {
  pollux::Runtime rt = pollux::Runtime::current_thread();
  auto [tx, rx] = pollux::mpsc::channel<Job>(kQueue);
  auto pool = std::make_shared<Pool>(std::move(rx));
  std::vector<pollux::JoinHandle<std::uint64_t>> workers;
  for (std::size_t w = 0; w < kWorkers; ++w) workers.push_back(rt.spawn(Worker(pool)));
  auto [sum, waited] = rt.block_on(Producer(std::move(tx)));
  std::uint64_t jobs = 0;
  for (auto& worker : workers) jobs += rt.block_on(std::move(worker)).value();
  std::uint64_t expected = kJobs * (kJobs + 1) * (2 * kJobs + 1) / 6;  // 1^2 + ... + 20^2
  std::printf(
      "worker_queue: %llu jobs by %zu workers, at most %d running at once (limit %zu); "
      "sum of squares %llu (expected %llu); the producer waited for room %llu times\n",
      static_cast<unsigned long long>(jobs), kWorkers, pool->most_running.load(), kRunning,
      static_cast<unsigned long long>(sum), static_cast<unsigned long long>(expected),
      static_cast<unsigned long long>(waited));
  bool ok = jobs == kJobs && sum == expected && pool->most_running.load() <= static_cast<int>(kRunning) && waited > 0;
  return ok ? 0 : 1;
}
