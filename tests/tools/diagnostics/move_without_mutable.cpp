// expect: deleted function|deleted copy constructor
// A lambda that moves a captured future out, without `mutable`: the capture
// is const, so std::move(inner) would copy it, and a timer cannot be copied.
#include <pollux/pollux.hpp>
#include <chrono>

int main() {
  auto inner = pollux::sleep(std::chrono::milliseconds(1));
  auto f = pollux::ready_future(2) | pollux::then([inner = std::move(inner)](int) { return std::move(inner); });
  pollux::block_on(std::move(f));
}
