// What the Asio bridge's suites share: an io_context run by a thread of its
// own, and both runtimes to await Asio from.
#pragma once

#include <asio.hpp>

#include <chrono>
#include <thread>
#include <vector>

#include <pollux/pollux.hpp>

namespace test {

// An io_context run by a thread of its own until the Asio object is
// destroyed (the work guard goes, and run() returns once nothing is left).
class AsioThread {
 public:
  AsioThread() : runner_([this] { ioc.run(); }) {}
  ~AsioThread() { finish(); }
  // Lets run() end once the outstanding operations are done; true if it
  // did within `limit` (a cancelled 10 s timer must not keep it).
  bool finish(std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
    if (!runner_.joinable()) return true;
    work_.reset();
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!ioc.stopped() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    bool ended = ioc.stopped();
    if (!ended) ioc.stop();
    runner_.join();
    return ended;
  }

  asio::io_context ioc;

 private:
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(ioc);
  std::thread runner_;
};

// Both runtimes, for every test that awaits Asio from pollux.
inline std::vector<pollux::Runtime> runtimes() {
  std::vector<pollux::Runtime> all;
  all.push_back(pollux::Runtime::current_thread());
  all.push_back(pollux::Runtime::multi_thread(2));
  return all;
}

}  // namespace test
