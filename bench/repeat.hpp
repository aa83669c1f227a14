// Repeat: a future that runs make(i) to completion for i = 0..n-1, one
// after the other, in one block_on, as the peers' `for i in 0..n {
// f(i).await }`. For the file, process and TLS rows.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>

#include <pollux/pollux.hpp>

namespace bench {

template <class Make>
class Repeat {
 public:
  using Output = std::uint64_t;  // how many ran
  Repeat(std::uint64_t n, Make make) : n_(n), make_(std::move(make)) {}

  pollux::Poll<std::uint64_t> poll(pollux::Context& cx) {
    while (done_ < n_) {
      if (!current_) current_.emplace(make_(done_));
      if (current_->poll(cx).is_pending()) return pollux::pending;
      current_.reset();
      ++done_;
    }
    return pollux::ready(done_);
  }

 private:
  using Step = std::invoke_result_t<Make&, std::uint64_t>;
  std::uint64_t n_, done_ = 0;
  Make make_;
  std::optional<Step> current_;
};

}  // namespace bench
