// scripts/compile-times: the cost of pollux's header alone.
#include <pollux/pollux.hpp>

int main() {}
