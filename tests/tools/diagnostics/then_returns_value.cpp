// expect: fn must return a future
// then(fn) with a fn that returns a plain value (map is for that).
#include <pollux/pollux.hpp>

int main() {
  auto f = pollux::ready_future(20) | pollux::then([](int n) { return n + 1; });
  return pollux::block_on(std::move(f));
}
