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

TEST_CASE("flatten turns a Result of a Result into one, the outer error converted to the inner type") {
  struct Inner {
    std::string why;
  };
  struct Outer {
    operator Inner() const { return Inner{"outer"}; }  // NOLINT: the conversion flatten needs
  };
  Result<Result<int, Inner>, Outer> both_ok = Result<int, Inner>(3);
  CHECK(std::move(both_ok).flatten().value() == 3);
  Result<Result<int, Inner>, Outer> inner_failed = Result<int, Inner>(Inner{"inner"});
  CHECK(std::move(inner_failed).flatten().error().why == "inner");
  Result<Result<int, Inner>, Outer> outer_failed = Outer{};
  CHECK(std::move(outer_failed).flatten().error().why == "outer");
}

TEST_CASE("map_error brings an error to another type, and and_then chains steps that can fail") {
  struct Why {
    std::string text;
  };
  auto parse = [](std::string text) -> Result<int, Why> {
    if (text.empty()) return Why{"empty"};
    return static_cast<int>(text.size());
  };
  auto why_of = [](int code) { return Why{"code " + std::to_string(code)}; };
  Result<std::string, int> got = std::string("four");
  CHECK(std::move(got).map_error(why_of).and_then(parse).value() == 4);
  Result<std::string, int> failed = 7;
  CHECK(std::move(failed).map_error(why_of).and_then(parse).error().text == "code 7");
  Result<std::string, int> empty = std::string();
  CHECK(std::move(empty).map_error(why_of).and_then(parse).error().text == "empty");
}

TEST_CASE("map changes the value and keeps the error") {
  Result<int, std::string> five = 5;
  CHECK(std::move(five).map([](int v) { return v * 2; }).value() == 10);
  Result<int, std::string> failed = std::string("no");
  CHECK(std::move(failed).map([](int v) { return v * 2; }).error() == "no");
}

TEST_CASE("a framed line under a timeout flattens into one Result with one error type") {
  Result<Result<std::string, FrameError>, Elapsed> timed_out = Elapsed{};
  Result<std::string, FrameError> line = std::move(timed_out).flatten();
  REQUIRE_FALSE(line);
  CHECK(line.error().is_timed_out());
  Result<Result<std::string, FrameError>, Elapsed> arrived = Result<std::string, FrameError>(std::string("hi"));
  CHECK(std::move(arrived).flatten().value() == "hi");
}
