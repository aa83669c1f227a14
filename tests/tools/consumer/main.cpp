// A program that uses pollux as an installed (or subproject) library: it is
// built three ways by tests/consumers.sh (CMake find_package, pkg-config,
// meson subproject) and checks what it computes.
#include <pollux/pollux.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

using namespace std::chrono_literals;

int main() {
  auto rt = pollux::Runtime::multi_thread(2);
  std::vector<pollux::JoinHandle<int>> handles;
  for (int n = 1; n <= 10; ++n) {
    handles.push_back(rt.spawn(pollux::map(pollux::sleep(1ms), [n] { return n; })));
  }
  int sum = 0;
  for (auto& value : rt.block_on(pollux::join_all(std::move(handles)))) sum += value.value();
  std::printf("consumer: sum %d\n", sum);
  return sum == 55 ? 0 : 1;
}
