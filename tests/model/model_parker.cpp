// Parker's protocol (exec/parker.hpp), compiled over the model checker's
// atomics and futex (POLLUX_MODEL) and run under every interleaving of the
// owner and the threads that unpark it, in each place the owner can sleep:
// the futex, a driver (park_in_driver) and its own thread park (a pool
// worker's ring). The invariant is the one the type promises: an unpark is
// never lost. Whatever the order, a park that an unpark came before, or
// during, returns; a lost one leaves the owner asleep for ever, which the
// checker reports as a deadlock.
#include <doctest/doctest.h>

#include <memory>

#include "model_task.hpp"
#include "pollux/exec/parker.hpp"

namespace {

using pollux::Arc;
using pollux::IdleDriver;
using pollux::Parker;

// An IdleDriver that sleeps on a token of its own, as the driver and a worker ring
// do (an eventfd): unpark() leaves it, park() consumes it or sleeps until it
// comes, poll() consumes it without sleeping.
class ModelPark final : public IdleDriver {
 public:
  void park() override {
    while (token_.exchange(0) == 0) token_.wait(0);
  }
  void poll() override { token_.store(0); }
  void unpark() noexcept override {
    token_.store(1);
    token_.notify_one();
  }
  void end_thread() noexcept override { ended_ = true; }
  bool ended() const { return ended_; }

 private:
  pollux::detail::Atomic<int> token_{0};
  bool ended_ = false;
};

// Outside: an outside loop's wait (LocalExecutor::turn), which enters the
// driver state without sleeping and then waits on the driver's own token,
// as an io_context waits on the driver's wait_fd; a begin that finds an
// unpark already there does not wait.
enum class Sleep { Futex, Driver, ThreadPark, Outside };

// The owner parks once while `unparkers` threads unpark once each: in no
// schedule may the park fail to return. Reports how many schedules ran.
void explore(Sleep where, int unparkers, int bound) {
  model::Checker checker(bound);
  std::uint64_t runs = checker.explore([=] {
    auto driver = pollux::make_arc<ModelPark>();
    bool with_driver = where == Sleep::Driver || where == Sleep::Outside;
    auto parker = with_driver ? pollux::make_arc<Parker>(Arc<IdleDriver>(driver)) : pollux::make_arc<Parker>();
    if (where == Sleep::ThreadPark) parker->attach_thread_park(Arc<IdleDriver>(driver));
    // What an unparker wrote before unpark() (a task it queued) is what the
    // owner reads once its park returned: with one unparker, whatever woke
    // the owner must order the two.
    auto published = std::make_shared<model::Cell<int>>(0);
    model::Checker::Execution e;
    e.threads.push_back([=] {
      if (where == Sleep::Driver) {
        parker->park_in_driver();
      } else if (where == Sleep::Outside) {
        if (parker->begin_external_park()) {
          driver->park();  // the outside loop's wait on the fd
          parker->end_external_park();
        }
      } else {
        parker->park();
      }
      if (where == Sleep::ThreadPark) parker->close_thread_park();
      if (unparkers == 1) (void)published->read();
    });
    for (int i = 0; i < unparkers; ++i) {
      e.threads.push_back([=] {
        if (unparkers == 1) published->write() = 1;
        parker->unpark();
      });
    }
    e.finish = [=] {
      if (where == Sleep::ThreadPark) model::check(driver->ended(), "the thread park was not ended");
    };
    return e;
  });
  model_task::report(runs);
}

}  // namespace

TEST_CASE("a parker on its futex loses no unpark, in any order") { explore(Sleep::Futex, 1, 3); }

TEST_CASE("a parker on its futex loses no unpark with two unparkers racing") { explore(Sleep::Futex, 2, 2); }

TEST_CASE("a parker sleeping in its driver loses no unpark, in any order") { explore(Sleep::Driver, 1, 3); }

TEST_CASE("a parker sleeping in its driver loses no unpark with two unparkers racing") { explore(Sleep::Driver, 2, 2); }

TEST_CASE("a parker sleeping in its own thread park loses no unpark, in any order") {
  explore(Sleep::ThreadPark, 1, 3);
}

TEST_CASE("a parker sleeping in its own thread park loses no unpark with two unparkers racing") {
  explore(Sleep::ThreadPark, 2, 2);
}

TEST_CASE("an executor waiting in an outside loop loses no unpark, in any order") { explore(Sleep::Outside, 1, 3); }

TEST_CASE("an executor waiting in an outside loop loses no unpark with two unparkers racing") {
  explore(Sleep::Outside, 2, 2);
}
