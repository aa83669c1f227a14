// expect: not a future
// A value that is not a future, given to block_on.
#include <pollux/pollux.hpp>

int main() { return pollux::block_on(42); }
