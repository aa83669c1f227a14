#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "support.hpp"

using namespace pollux;

TEST_CASE("a Result holds its value or its error, and says which") {
  Result<int, Elapsed> ok = 5;
  Result<int, Elapsed> late = Elapsed{};
  CHECK(ok.has_value());
  CHECK(ok == 5);
  CHECK_FALSE(late.has_value());
  CHECK(late == Elapsed{});
  CHECK(late.value_or(0) == 0);
}

TEST_CASE("value() on an error throws logic_error whose message names the error") {
  Result<int, Elapsed> late = Elapsed{};
  CHECK_THROWS_WITH_AS(late.value(), "pollux::Result::value() on an error: deadline has elapsed", std::logic_error);
  Result<void, Cancelled> cancelled = Cancelled{43};
  CHECK_THROWS_WITH_AS(cancelled.value(), doctest::Contains("task 43 was cancelled"), std::logic_error);
}

TEST_CASE("value() on an error that cannot describe itself still throws logic_error") {
  Result<int, Aborted> aborted = Aborted{};
  CHECK_THROWS_WITH_AS(aborted.value(), "pollux::Result::value() on an error", std::logic_error);
}

TEST_CASE("value() on an error that is an exception type throws that error") {
  Result<int, std::runtime_error> failed = std::runtime_error("disk on fire");
  CHECK_THROWS_WITH_AS(failed.value(), "disk on fire", std::runtime_error);
}

TEST_CASE("error() on a value throws logic_error") {
  Result<std::string, Cancelled> ok = std::string("fine");
  CHECK_THROWS_WITH_AS(ok.error(), "pollux::Result::error() on a value", std::logic_error);
  Result<void, Cancelled> ok_void;
  CHECK_THROWS_AS(ok_void.error(), std::logic_error);
}

TEST_CASE(
    "a JoinHandle's Result is trivially copyable when its output is, so a finished task's output moves for free") {
  static_assert(std::is_trivially_copyable_v<Cancelled>);
  static_assert(std::is_trivially_destructible_v<output_t<JoinHandle<std::uint64_t>>>);
  CHECK(Cancelled{7} == Cancelled{7});
}
