// expect: a stream is not a future
// A stream given where a future is expected.
#include <pollux/pollux.hpp>
#include <vector>

int main() {
  auto items = pollux::iter(std::vector<int>{1, 2, 3});
  return pollux::block_on(std::move(items));
}
