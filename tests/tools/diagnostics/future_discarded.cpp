// expect: nothing unless polled
// A bounded channel's send, discarded: it would never send.
#include <pollux/pollux.hpp>

int main() {
  auto [tx, rx] = pollux::mpsc::channel<int>(1);
  tx.send(1);
  return 0;
}
