// collect_futures(range): the futures of any input range, moved into one
// vector, for the combinators over a range (join_all, try_join_all,
// select_all). A range that knows its size gets one allocation, not the
// doublings of a growing vector: a view such as iota | transform, which
// is how a range of futures is usually written, builds in one pass.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <ranges>
#include <utility>
#include <vector>

namespace pollux::detail {

template <std::ranges::input_range R>
std::vector<std::ranges::range_value_t<R>> collect_futures(R&& range) {
  std::vector<std::ranges::range_value_t<R>> futures;
  if constexpr (std::ranges::sized_range<R>) futures.reserve(std::ranges::size(range));
  for (auto&& future : range) futures.push_back(std::move(future));
  return futures;
}

}  // namespace pollux::detail
