// expect: a function is not a future
// A function, not a future, given to spawn.
#include <pollux/pollux.hpp>

int main() {
  auto rt = pollux::Runtime::current_thread();
  return rt.block_on(rt.spawn([] { return 1; }));
}
