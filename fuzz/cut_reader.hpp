// CutReader: an AsyncRead that gives a fuzzer's bytes in reads whose sizes
// the input picks (`cuts`, one byte per read, taken modulo `modulus`), then
// the end of the stream. Without cuts, each read takes all the buffer can
// hold. Never Pending, so a fuzz target can drive a FramedRead with the
// no-op waker.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>
#include <string_view>

#include <pollux/pollux.hpp>

namespace fuzz {

class CutReader {
 public:
  CutReader(std::string_view bytes, std::string_view cuts, std::size_t modulus)
      : bytes_(bytes), cuts_(cuts), modulus_(modulus) {}

  pollux::Poll<std::size_t> poll_read(pollux::Context&, std::span<std::byte> buffer) {
    std::size_t want =
        cuts_.empty() ? buffer.size() : 1 + static_cast<unsigned char>(cuts_[next_++ % cuts_.size()]) % modulus_;
    std::size_t n = std::min({want, buffer.size(), bytes_.size()});
    std::memcpy(buffer.data(), bytes_.data(), n);
    bytes_.remove_prefix(n);
    return pollux::ready(n);
  }
  void abandon(pollux::Interest) noexcept {}

 private:
  std::string_view bytes_, cuts_;
  std::size_t modulus_;
  std::size_t next_ = 0;
};

}  // namespace fuzz
