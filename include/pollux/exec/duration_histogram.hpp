// DurationHistogram: how many durations fell in each of a fixed set of
// ranges that double in width, from under a microsecond to seconds. The
// executors' metrics use it for poll durations and schedule latencies;
// fixed ranges make recording one division and a bit count, and make
// histograms of different workers add up bucket by bucket.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <array>
#include <cstddef>
#include <cstdint>

#include "pollux/core/detail/chrono.hpp"

namespace pollux {

/// Counts of durations by range: bucket 0 holds those under 1 µs, bucket
/// i (0 < i < kBuckets - 1) those in [2^(i-1), 2^i) µs, and the last one
/// everything from 2^(kBuckets-2) µs (about 4.2 s) up.
struct DurationHistogram {
  /// The number of buckets.
  static constexpr std::size_t kBuckets = 24;
  /// How many durations fell in each bucket.
  std::array<std::uint64_t, kBuckets> counts{};
  /// The durations added up (a mean is sum / total(); Prometheus wants it).
  std::chrono::nanoseconds sum{0};

  /// The bucket a duration falls in.
  static std::size_t bucket_of(std::chrono::nanoseconds duration) noexcept;
  /// The shortest duration bucket `i` holds.
  static std::chrono::nanoseconds lower_bound(std::size_t i) noexcept;
  /// The end of bucket `i`'s range (excluded); nanoseconds::max() for the last.
  static std::chrono::nanoseconds upper_bound(std::size_t i) noexcept;

  /// The number of durations counted.
  std::uint64_t total() const noexcept;
  /// An upper bound of the `q`-quantile (0 < q <= 1): the end of the bucket
  /// that holds it (the last bucket's lower bound if it is the last). Zero
  /// when nothing was counted.
  std::chrono::nanoseconds quantile(double q) const noexcept;
  /// Adds `other`'s counts bucket by bucket, and its sum (the workers' into one).
  DurationHistogram& operator+=(const DurationHistogram& other) noexcept;
};

}  // namespace pollux
