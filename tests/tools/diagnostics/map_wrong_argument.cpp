// expect: map\(fn\)`: fn cannot take
// A map function whose parameter is not the future's output.
#include <pollux/pollux.hpp>
#include <string>

int main() {
  auto f = pollux::ready_future(42) | pollux::map([](std::string s) { return s.size(); });
  return static_cast<int>(pollux::block_on(std::move(f)));
}
