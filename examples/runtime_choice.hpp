// What the server examples share: the runtime named on the command line,
// "ct" (current thread, the default), "mt" (two workers) or a worker count.
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include <pollux/pollux.hpp>

inline pollux::Runtime runtime_from_arg(std::string_view arg) {
  if (arg.empty() || arg == "ct") return pollux::Runtime::current_thread();
  if (arg == "mt") return pollux::Runtime::multi_thread(2);
  int workers = std::atoi(std::string(arg).c_str());
  if (workers <= 0) throw std::invalid_argument("runtime must be ct, mt or a worker count, got \"" + std::string(arg) + "\"");
  return pollux::Runtime::multi_thread(static_cast<std::size_t>(workers));
}
