// DurationHistogram's ranges and ExecutorMetrics' sums.
#include "pollux/exec/executor_metrics.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "pollux/exec/duration_histogram.hpp"

namespace pollux {

std::size_t DurationHistogram::bucket_of(std::chrono::nanoseconds duration) noexcept {
  auto us = static_cast<std::uint64_t>(std::max<std::int64_t>(duration.count(), 0)) / 1000;
  return std::min<std::size_t>(static_cast<std::size_t>(std::bit_width(us)), kBuckets - 1);
}

std::chrono::nanoseconds DurationHistogram::lower_bound(std::size_t i) noexcept {
  if (i == 0) return std::chrono::nanoseconds(0);
  return std::chrono::microseconds(std::int64_t{1} << (i - 1));
}

std::chrono::nanoseconds DurationHistogram::upper_bound(std::size_t i) noexcept {
  if (i + 1 >= kBuckets) return std::chrono::nanoseconds::max();
  return std::chrono::microseconds(std::int64_t{1} << i);
}

std::uint64_t DurationHistogram::total() const noexcept {
  std::uint64_t sum = 0;
  for (std::uint64_t n : counts) sum += n;
  return sum;
}

std::chrono::nanoseconds DurationHistogram::quantile(double q) const noexcept {
  std::uint64_t all = total();
  if (all == 0) return std::chrono::nanoseconds(0);
  // The rank of the quantile, 1-based: the first bucket whose running
  // count reaches it holds it.
  auto rank = static_cast<std::uint64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(all)));
  rank = std::max<std::uint64_t>(rank, 1);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts[i];
    if (seen >= rank) return i + 1 == kBuckets ? lower_bound(i) : upper_bound(i);
  }
  return lower_bound(kBuckets - 1);
}

DurationHistogram& DurationHistogram::operator+=(const DurationHistogram& other) noexcept {
  for (std::size_t i = 0; i < kBuckets; ++i) counts[i] += other.counts[i];
  sum += other.sum;
  return *this;
}

std::uint64_t ExecutorMetrics::total_polls() const noexcept {
  std::uint64_t sum = 0;
  for (const WorkerMetrics& w : worker) sum += w.polls;
  return sum;
}

std::chrono::nanoseconds ExecutorMetrics::total_busy() const noexcept {
  std::chrono::nanoseconds sum{0};
  for (const WorkerMetrics& w : worker) sum += w.busy;
  return sum;
}

}  // namespace pollux
