// An exception thrown by a task whose JoinHandle is gone never vanishes
// silently: it is reported on stderr by default, and the runtime's option
// chooses between ignoring it, reporting it and ending the process.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "death.hpp"
#include "support.hpp"

using namespace pollux;
using test::Death;
using test::run_in_child;

namespace {
auto failing() {
  return lazy([]() -> int { throw std::runtime_error("disk on fire"); });
}

// Runs a detached failing task on a runtime with `options`, in a child.
Death detached_failure(RuntimeOptions options, bool multi_thread) {
  return run_in_child([=] {
    auto rt = multi_thread ? Runtime::multi_thread(2, options) : Runtime::current_thread(options);
    rt.block_on(lazy([] { (void)pollux::spawn(failing(), "indexer"); }));
    // The report is printed when the task ends, before it leaves the
    // runtime: wait for that (at most 10 s), where a fixed 20 ms guessed
    // how soon a loaded machine's worker polls it.
    for (int turns = 0; rt.live_tasks() != 0 && turns < 2000; ++turns) {
      rt.block_on(sleep(std::chrono::milliseconds(5)));
    }
  });
}
}  // namespace

TEST_CASE("a detached task's exception is reported on stderr with the task's id, name and message") {
  for (bool mt : {false, true}) {
    Death death = detached_failure({}, mt);
    INFO(death.stderr_text);
    CHECK_FALSE(death.aborted);
    CHECK(death.stderr_text.find("pollux: task ") != std::string::npos);
    CHECK(death.stderr_text.find("\"indexer\" failed and nobody awaited it: disk on fire") != std::string::npos);
  }
}

TEST_CASE("UnhandledException::Ignore drops a detached task's exception without a word") {
  Death death = detached_failure({UnhandledException::Ignore}, false);
  CHECK_FALSE(death.aborted);
  CHECK(death.stderr_text.empty());
}

TEST_CASE("UnhandledException::Terminate reports a detached task's exception and ends the process") {
  for (bool mt : {false, true}) {
    Death death = detached_failure({UnhandledException::Terminate}, mt);
    INFO(death.stderr_text);
    CHECK(death.aborted);
    CHECK(death.stderr_text.find("disk on fire") != std::string::npos);
  }
}

TEST_CASE("an exception awaited through the JoinHandle is the awaiter's, and is not reported") {
  Death death = run_in_child([] {
    auto rt = Runtime::current_thread({UnhandledException::Terminate});
    auto handle = rt.spawn(failing());
    try {
      (void)rt.block_on(std::move(handle));
    } catch (const std::runtime_error&) {
    }
  });
  CHECK_FALSE(death.aborted);
  CHECK(death.stderr_text.empty());
}

TEST_CASE("a JoinHandle destroyed after its task failed leaves the exception unhandled, and it is reported") {
  Death death = run_in_child([] {
    auto rt = Runtime::current_thread();
    auto handle = rt.spawn(failing(), "late");
    rt.block_on(yield_now());  // the task ran and failed; nobody looked
    REQUIRE(handle.is_finished());
    { auto gone = std::move(handle); }
  });
  CHECK(death.stderr_text.find("\"late\" failed and nobody awaited it: disk on fire") != std::string::npos);
}

TEST_CASE("a task built with make_task and a plain schedule function reports by default") {
  Death death = run_in_child([] {
    std::vector<Runnable> queue;
    auto [runnable, handle] = make_task(
        failing(), [&](Runnable r) { queue.push_back(std::move(r)); }, "custom");
    { auto detached = std::move(handle); }
    runnable.run();
  });
  CHECK(death.stderr_text.find("\"custom\" failed and nobody awaited it") != std::string::npos);
}
