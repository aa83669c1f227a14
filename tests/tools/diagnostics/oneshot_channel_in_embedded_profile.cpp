// expect: declare a oneshot::Slot<T>
// A program of the embedded profile asks for a oneshot channel of its own,
// which would come from the heap: the error names the slot to declare.
#define POLLUX_SINGLE_CORE
#include <pollux/sync/oneshot.hpp>

int main() {
  auto [tx, rx] = pollux::oneshot::channel<int>();
  (void)tx.send(1);
  return 0;
}
