// scripts/compile-times: the cost of Asio's header alone.
#include <asio.hpp>

int main() {}
