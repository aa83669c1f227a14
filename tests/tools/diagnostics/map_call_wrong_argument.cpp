// expect: map\(f, fn\)`: fn cannot take
// The call form map(f, fn) with a function whose parameter is not the
// future's output: told as the pipe form is.
#include <pollux/pollux.hpp>
#include <string>

int main() {
  auto f = pollux::map(pollux::ready_future(42), [](std::string s) { return s.size(); });
  return static_cast<int>(pollux::block_on(std::move(f)));
}
