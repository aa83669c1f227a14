// try_join and try_join_all: every value when all succeed, the first
// failure as soon as one fails (the others cancelled at once), for Result
// and std::optional outputs.
#include <doctest/doctest.h>

#include <string>

#include "support.hpp"

using namespace pollux;

namespace {
struct Error {
  std::string what;
};

// A ManualFuture whose int becomes a Result: negative values fail.
auto fallible(std::shared_ptr<test::Control> c) {
  return test::ManualFuture(std::move(c)) | map([](int v) -> Result<int, Error> {
           if (v < 0) return Error{"negative"};
           return v;
         });
}
}  // namespace

TEST_CASE("try_join of successes is a tuple of the values") {
  auto f = try_join(ready_future(Result<int, Error>(1)), ready_future(Result<std::string, Error>(std::string("a"))));
  auto out = test::poll_once(f).value();
  REQUIRE(out.has_value());
  CHECK(out.value() == std::tuple<int, std::string>(1, "a"));
}

TEST_CASE("try_join ends with the first failure at once and destroys the others") {
  auto a = std::make_shared<test::Control>();
  int drops = 0;
  auto f = try_join(fallible(a), test::PendingWithDrop(&drops) | map([](int v) { return Result<int, Error>(v); }));
  CHECK(test::poll_once(f).is_pending());
  a->complete(-1);
  auto out = test::poll_once(f);
  REQUIRE(out.is_ready());
  CHECK(out.value().error().what == "negative");
  CHECK(drops == 1);
}

TEST_CASE("try_join of optionals fails with nullopt") {
  auto f = try_join(ready_future(std::optional<int>(1)), ready_future(std::optional<int>()));
  CHECK_FALSE(test::poll_once(f).value().has_value());
  auto g = try_join(ready_future(std::optional<int>(1)), ready_future(std::optional<char>('x')));
  CHECK(test::poll_once(g).value() == std::optional(std::tuple<int, char>(1, 'x')));
}

TEST_CASE("try_join gives Unit for a Result<void, E>") {
  auto f = try_join(ready_future(Result<void, Error>()), ready_future(Result<int, Error>(2)));
  CHECK(std::get<1>(test::poll_once(f).value().value()) == 2);
}

TEST_CASE("try_join_all gives the values in input order, whatever order they finish in") {
  std::vector<std::shared_ptr<test::Control>> controls;
  std::vector<decltype(fallible(nullptr))> futures;
  for (int i = 0; i < 4; ++i) {
    controls.push_back(std::make_shared<test::Control>());
    futures.push_back(fallible(controls.back()));
  }
  auto f = try_join_all(std::move(futures));
  CHECK(test::poll_once(f).is_pending());
  for (int i = 3; i >= 0; --i) controls[i]->complete(i * 10);
  CHECK(test::poll_once(f).value().value() == std::vector<int>{0, 10, 20, 30});
}

TEST_CASE("try_join_all ends with the first failure and cancels the rest") {
  std::vector<std::shared_ptr<test::Control>> controls;
  std::vector<decltype(fallible(nullptr))> futures;
  for (int i = 0; i < 3; ++i) {
    controls.push_back(std::make_shared<test::Control>());
    futures.push_back(fallible(controls.back()));
  }
  auto f = try_join_all(std::move(futures));
  CHECK(test::poll_once(f).is_pending());
  controls[1]->complete(-5);
  CHECK(test::poll_once(f).value().error().what == "negative");
  CHECK(controls[0].use_count() == 1);  // its future is gone
  CHECK(controls[2].use_count() == 1);
}

TEST_CASE("try_join_all of nothing succeeds with an empty vector") {
  std::vector<ReadyFuture<std::optional<int>>> none;
  auto f = try_join_all(std::move(none));
  CHECK(test::poll_once(f).value() == std::optional(std::vector<int>{}));
}
