// expect: map\(fn\)`: fn cannot take
// A stream's map function whose parameter is not the stream's item.
#include <pollux/pollux.hpp>
#include <string>
#include <vector>

int main() {
  auto sizes = pollux::iter(std::vector<int>{1, 2}) | pollux::map([](const std::string& s) { return s.size(); })
               | pollux::collect();
  return static_cast<int>(pollux::block_on(std::move(sizes)).size());
}
