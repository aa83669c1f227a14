// expect: takes a stream
// A future given to a stream adapter.
#include <pollux/pollux.hpp>

int main() {
  auto all = pollux::ready_future(1) | pollux::collect();
  return static_cast<int>(pollux::block_on(std::move(all)).size());
}
