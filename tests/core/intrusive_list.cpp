// IntrusiveList: the one list every wait list, timer slot and task registry
// is made of. Each behaviour is checked through the links it leaves, in the
// orders a caller meets: first, last, middle and only node.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "death.hpp"
#include "pollux/core/detail/intrusive_list.hpp"

using pollux::detail::CountedIntrusiveList;
using pollux::detail::IntrusiveList;
using pollux::detail::ListHook;

namespace {

struct Node {
  explicit Node(int v = 0) : value(v) {
#ifdef NDEBUG
    // A release build leaves a new node's links unset: poison them, so an
    // operation that reads a link it did not write fails every time.
    hook.prev = hook.next = reinterpret_cast<Node*>(alignof(Node));
#endif
  }
  int value;
  ListHook<Node> hook;
};

using List = IntrusiveList<Node, &Node::hook>;

std::vector<int> values(const List& list) {
  std::vector<int> out;
  for (const Node& node : list) out.push_back(node.value);
  return out;
}

// The same walk backwards, from the last node: checks every prev link.
std::vector<int> values_backwards(List& list) {
  std::vector<int> out;
  for (Node* node = list.empty() ? nullptr : &list.back(); node != nullptr; node = List::prev(*node)) {
    out.insert(out.begin(), node->value);
  }
  return out;
}

// A debug build nulls an unlinked node's links (a release build leaves
// them unset, so there is nothing to look at there).
#ifndef NDEBUG
bool unlinked(const Node& node) { return node.hook.prev == nullptr && node.hook.next == nullptr; }
#define CHECK_UNLINKED(...) CHECK((__VA_ARGS__))
#else
#define CHECK_UNLINKED(...)
#endif

}  // namespace

TEST_CASE("an intrusive list keeps push_back order and gives the nodes back first to last") {
  Node a{1}, b{2}, c{3};
  List list;
  CHECK(list.empty());
  list.push_back(a);
  list.push_back(b);
  list.push_back(c);
  CHECK(values(list) == std::vector<int>{1, 2, 3});
  CHECK(values_backwards(list) == std::vector<int>{1, 2, 3});
  CHECK(&list.pop_front() == &a);
  CHECK(&list.pop_front() == &b);
  CHECK(&list.pop_front() == &c);
  CHECK(list.empty());
  CHECK_UNLINKED(unlinked(a) && unlinked(b) && unlinked(c));
}

TEST_CASE("push_front links before the first node") {
  Node a{1}, b{2};
  List list;
  list.push_front(a);
  list.push_front(b);
  CHECK(values(list) == std::vector<int>{2, 1});
  CHECK(values_backwards(list) == std::vector<int>{2, 1});
  while (!list.empty()) list.pop_front();
}

TEST_CASE("erase unlinks the first, the middle, the last and the only node, leaving the rest linked both ways") {
  Node a{1}, b{2}, c{3}, d{4};
  List list;
  for (Node* node : {&a, &b, &c, &d}) list.push_back(*node);
  list.erase(b);  // middle
  CHECK(values(list) == std::vector<int>{1, 3, 4});
  CHECK(values_backwards(list) == std::vector<int>{1, 3, 4});
  list.erase(a);  // first
  CHECK(values(list) == std::vector<int>{3, 4});
  CHECK(values_backwards(list) == std::vector<int>{3, 4});
  list.erase(d);  // last
  CHECK(values(list) == std::vector<int>{3});
  CHECK(values_backwards(list) == std::vector<int>{3});
  list.erase(c);  // only
  CHECK(list.empty());
  CHECK_UNLINKED(unlinked(a) && unlinked(b) && unlinked(c) && unlinked(d));
}

TEST_CASE("an erased node can be linked again, in the same list or another") {
  Node a{1}, b{2};
  List first, second;
  first.push_back(a);
  first.push_back(b);
  first.erase(a);
  second.push_back(a);
  first.erase(b);
  first.push_back(b);
  CHECK(values(first) == std::vector<int>{2});
  CHECK(values(second) == std::vector<int>{1});
  first.erase(b);
  second.erase(a);
}

TEST_CASE("insert_after links after a given node, at the front for null, and at the back after the last") {
  Node a{1}, b{2}, c{3}, d{4};
  List list;
  list.insert_after(nullptr, b);  // into an empty list
  list.insert_after(&b, d);       // after the last
  list.insert_after(&b, c);       // in the middle
  list.insert_after(nullptr, a);  // at the front
  CHECK(values(list) == std::vector<int>{1, 2, 3, 4});
  CHECK(values_backwards(list) == std::vector<int>{1, 2, 3, 4});
  while (!list.empty()) list.pop_front();
}

TEST_CASE("sort orders the nodes stably, as std::stable_sort does, for every length up to 64") {
  std::mt19937 rng(7);
  for (int n = 0; n <= 64; ++n) {
    std::vector<Node> nodes(static_cast<std::size_t>(n));
    List list;
    for (int i = 0; i < n; ++i) {
      nodes[static_cast<std::size_t>(i)].value = static_cast<int>(rng() % 8) * 100 + i;  // key * 100 + position
      list.push_back(nodes[static_cast<std::size_t>(i)]);
    }
    auto by_key = [](const Node& a, const Node& b) { return a.value / 100 < b.value / 100; };
    list.sort(by_key);
    std::vector<int> expected;
    for (const Node& node : nodes) expected.push_back(node.value);
    std::stable_sort(expected.begin(), expected.end(), [](int a, int b) { return a / 100 < b / 100; });
    CHECK(values(list) == expected);
    CHECK(values_backwards(list) == expected);
    while (!list.empty()) list.pop_front();
  }
}

#ifndef NDEBUG  // is_linked is for the debug checks: a release build leaves unlinked links unset
TEST_CASE("is_linked tells a node in the list from one in none") {
  Node a{1}, b{2};
  List list;
  CHECK_FALSE(list.is_linked(a));
  list.push_back(a);
  CHECK(list.is_linked(a));  // alone in the list: found as its head
  list.push_back(b);
  CHECK(list.is_linked(b));
  list.erase(a);
  CHECK_FALSE(list.is_linked(a));
  list.erase(b);
}
#endif

TEST_CASE("a moved list takes the nodes and leaves its source empty") {
  Node a{1}, b{2};
  List list;
  list.push_back(a);
  list.push_back(b);
  List moved(std::move(list));
  CHECK(list.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is part of the contract
  CHECK(values(moved) == std::vector<int>{1, 2});
  List assigned;
  assigned = std::move(moved);
  CHECK(moved.empty());  // NOLINT(bugprone-use-after-move)
  CHECK(values(assigned) == std::vector<int>{1, 2});
  while (!assigned.empty()) assigned.pop_front();
}

TEST_CASE("a counted list's size follows every push, pop and erase") {
  Node a{1}, b{2}, c{3};
  CountedIntrusiveList<Node, &Node::hook> list;
  CHECK(list.size() == 0);
  list.push_back(a);
  list.push_back(b);
  list.push_back(c);
  CHECK(list.size() == 3);
  list.erase(b);
  CHECK(list.size() == 2);
  CHECK(&list.pop_front() == &a);
  CHECK(list.size() == 1);
  list.erase(c);
  CHECK(list.size() == 0);
  CHECK(list.empty());
}

#ifndef NDEBUG
TEST_CASE("erasing a node that is in no list stops a debug build with the broken precondition") {
  test::Death death = test::run_in_child([] {
    Node a{1}, b{2};
    List list;
    list.push_back(a);
    list.erase(b);
  });
  CHECK(death.aborted);
  CHECK(death.stderr_text.find("not in this list") != std::string::npos);
}

TEST_CASE("linking a node twice stops a debug build instead of corrupting the list") {
  test::Death death = test::run_in_child([] {
    Node a{1}, b{2};
    List list;
    list.push_back(a);
    list.push_back(b);
    list.push_back(a);
  });
  CHECK(death.aborted);
  CHECK(death.stderr_text.find("already linked") != std::string::npos);
}
#endif
