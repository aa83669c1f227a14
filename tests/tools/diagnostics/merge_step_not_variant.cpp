// expect: for_each\(fn\)`: fn cannot take
// A step of a merge_variant loop that takes one source's item, not the variant.
#include <pollux/pollux.hpp>
#include <string>
#include <vector>

int main() {
  auto loop = pollux::merge_variant(pollux::iter(std::vector<int>{1}), pollux::iter(std::vector<std::string>{"a"}))
              | pollux::for_each([](int n) { (void)n; });
  pollux::block_on(std::move(loop));
}
