// expect: by_ref
// select over a future the caller means to use again, passed without by_ref.
#include <pollux/pollux.hpp>
#include <chrono>

int main() {
  auto slow = pollux::sleep(std::chrono::seconds(1));
  auto first = pollux::block_on(pollux::select(slow, pollux::ready_future(1)));
  pollux::block_on(std::move(slow));
  return static_cast<int>(first.index());
}
