// expect: not in the embedded profile
// A program of the embedded profile (no heap, no threads) includes the
// hosted channel, which allocates its blocks: it stops at the include.
#define POLLUX_SINGLE_CORE
#include <pollux/sync/mpsc.hpp>

int main() { return 0; }
