// expect: inconsistent types|must match previous return type
// Two branches of a lambda that return different futures (Either<A, B> holds
// one or the other).
#include <pollux/pollux.hpp>
#include <chrono>

int main() {
  auto f = pollux::ready_future(true) | pollux::then([](bool now) {
             if (now) return pollux::ready_future(1);
             return pollux::sleep(std::chrono::milliseconds(1)) | pollux::map([] { return 2; });
           });
  return pollux::block_on(std::move(f));
}
