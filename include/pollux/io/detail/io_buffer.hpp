// The buffer of BufReader and BufWriter: allocated once, uninitialised,
// with a clear error for a capacity of zero.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

namespace pollux::detail {

inline std::unique_ptr<std::byte[]> allocate_io_buffer(std::size_t capacity, const char* what) {
  if (capacity == 0) throw std::invalid_argument(std::string(what) + ": the capacity must be at least 1");
  return std::make_unique_for_overwrite<std::byte[]>(capacity);
}

}  // namespace pollux::detail
