// What every stream adapter keeps, checked over each of them with a
// hand-driven source: the end of an empty source, every item of an ending
// one, a wake-up from a pending source passed through (no lost wake-up),
// an exception from the source let through, and no waker left behind when
// the adapter is destroyed mid-way.
#include <doctest/doctest.h>

#include <string>

#include "support.hpp"

using namespace pollux;

namespace {

using Control = std::shared_ptr<test::StreamControl>;

// Calls check(name, make) for each adapter; make(source) wraps a
// ManualStream in that adapter so that each source item comes out as one
// item (of whatever type).
template <class Check>
void for_each_adapter(Check check) {
  check("map", [](test::ManualStream s) { return std::move(s) | map([](int x) { return x + 1; }); });
  check("then", [](test::ManualStream s) { return std::move(s) | then([](int x) { return ready_future(x); }); });
  check("filter", [](test::ManualStream s) { return std::move(s) | filter([](int) { return true; }); });
  check("filter_map",
        [](test::ManualStream s) { return std::move(s) | filter_map([](int x) { return std::optional(x); }); });
  check("take", [](test::ManualStream s) { return std::move(s) | take(100); });
  check("take_while", [](test::ManualStream s) { return std::move(s) | take_while([](int) { return true; }); });
  check("skip", [](test::ManualStream s) { return std::move(s) | skip(0); });
  check("skip_while", [](test::ManualStream s) { return std::move(s) | skip_while([](int) { return false; }); });
  check("enumerate", [](test::ManualStream s) { return std::move(s) | enumerate(); });
  check("chain", [](test::ManualStream s) { return std::move(s) | chain(empty<int>()); });
  check("zip", [](test::ManualStream s) { return std::move(s) | zip(repeat(std::string("x"))); });
  check("merge", [](test::ManualStream s) { return std::move(s) | merge(empty<int>()); });
  check("merge_variant", [](test::ManualStream s) { return merge_variant(std::move(s), empty<std::string>()); });
  check("flatten", [](test::ManualStream s) {
    return std::move(s) | map([](int x) { return iter(std::vector<int>{x}); }) | flatten();
  });
  check("chunks", [](test::ManualStream s) { return std::move(s) | chunks(1); });
  check("fuse", [](test::ManualStream s) { return std::move(s) | fuse(); });
  check("take_until", [](test::ManualStream s) { return std::move(s) | take_until(pending_future<int>()); });
  check("buffer_unordered", [](test::ManualStream s) {
    return std::move(s) | map([](int x) { return ready_future(x); }) | buffer_unordered(4);
  });
  check("buffered",
        [](test::ManualStream s) { return std::move(s) | map([](int x) { return ready_future(x); }) | buffered(4); });
}

template <class S>
auto poll_next_with(S& stream, Context& cx) {
  return stream.poll_next(cx);
}

}  // namespace

TEST_CASE("every adapter of an empty source ends without an item") {
  for_each_adapter([](const char* name, auto make) {
    test::Probe probe;
    CAPTURE(name);
    auto control = std::make_shared<test::StreamControl>();
    control->ended = true;
    auto s = make(test::ManualStream(control));
    auto item = s.poll_next(probe.cx);
    REQUIRE(item.is_ready());
    CHECK_FALSE(item.value().has_value());
  });
}

TEST_CASE("every adapter of an ending source yields one item per source item, then ends") {
  for_each_adapter([](const char* name, auto make) {
    test::Probe probe;
    CAPTURE(name);
    auto control = std::make_shared<test::StreamControl>();
    control->items = {1, 2, 3};
    control->ended = true;
    auto s = make(test::ManualStream(control));
    int items = 0;
    for (;;) {
      auto item = s.poll_next(probe.cx);
      REQUIRE(item.is_ready());
      if (!item.value()) break;
      ++items;
    }
    CHECK(items == 3);
  });
}

TEST_CASE("every adapter passes a wake-up from its pending source on, and then yields the item") {
  for_each_adapter([](const char* name, auto make) {
    test::Probe probe;
    CAPTURE(name);
    auto control = std::make_shared<test::StreamControl>();
    auto s = make(test::ManualStream(control));
    CHECK(s.poll_next(probe.cx).is_pending());
    CHECK(probe.counts.woken() == 0);
    control->push(7);
    CHECK(probe.counts.woken() == 1);
    auto item = s.poll_next(probe.cx);
    REQUIRE(item.is_ready());
    CHECK(item.value().has_value());
    CHECK(s.poll_next(probe.cx).is_pending());
    control->end();
    CHECK(probe.counts.woken() == 2);
    auto end = s.poll_next(probe.cx);
    REQUIRE(end.is_ready());
    CHECK_FALSE(end.value().has_value());
  });
}

TEST_CASE("every adapter lets an exception from its source through") {
  for_each_adapter([](const char* name, auto make) {
    test::Probe probe;
    CAPTURE(name);
    auto control = std::make_shared<test::StreamControl>();
    control->throw_on_poll = true;
    auto s = make(test::ManualStream(control));
    CHECK_THROWS_AS((void)s.poll_next(probe.cx), std::runtime_error);
  });
}

TEST_CASE("an adapter destroyed while its source is pending leaves no waker behind") {
  for_each_adapter([](const char* name, auto make) {
    test::Probe probe;
    CAPTURE(name);
    auto control = std::make_shared<test::StreamControl>();
    {
      auto s = make(test::ManualStream(control));
      CHECK(s.poll_next(probe.cx).is_pending());
      CHECK(probe.counts.live() > 1);  // the source holds a clone
    }
    CHECK(probe.counts.live() == 1);
    control->push(1);
    CHECK(probe.counts.woken() == 0);
  });
}
