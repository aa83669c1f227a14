// Fuzzes LinesCodec, LengthDelimitedCodec and BytesCodec through
// FramedRead, with the input cut into reads of sizes the input picks. For
// every input and every cut: the frames are those a plain reference scan
// of the whole input finds, in order; an error is the last item; and the
// read buffer never holds more than the codec's maximum and two reads.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <pollux/pollux.hpp>

#include "cut_reader.hpp"

namespace {

// The frames (as text) and whether an error ended them.
struct Frames {
  std::vector<std::string> frames;
  bool error = false;
  bool operator==(const Frames&) const = default;
};

template <class Codec>
Frames decode(Codec codec, std::string_view bytes, std::string_view cuts, std::size_t bound) {
  pollux::FramedRead framed(fuzz::CutReader(bytes, cuts, 97), std::move(codec));
  pollux::Context cx(pollux::noop_waker());
  Frames out;
  for (;;) {
    auto item = framed.poll_next(cx);
    if (item.is_pending()) std::abort();  // the reader is never Pending
    if (framed.read_buffer().capacity() > bound) std::abort();
    if (!item.value()) return out;
    if (out.error) std::abort();  // nothing after an error
    if (!*item.value()) {
      out.error = true;
      continue;
    }
    auto& frame = item.value()->value();
    if constexpr (std::is_same_v<std::decay_t<decltype(frame)>, std::string>) {
      out.frames.push_back(frame);
    } else {
      out.frames.push_back(frame.to_string());
    }
  }
}

Frames lines_reference(std::string_view in, std::size_t max) {
  Frames out;
  while (!in.empty()) {
    std::size_t newline = in.find('\n');
    std::string_view line = in.substr(0, newline);
    if (newline != std::string_view::npos && !line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (newline == std::string_view::npos && !line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > max) {
      out.error = true;
      return out;
    }
    out.frames.emplace_back(line);
    if (newline == std::string_view::npos) break;
    in.remove_prefix(newline + 1);
  }
  return out;
}

Frames delimited_reference(std::string_view in, std::size_t max) {
  Frames out;
  while (!in.empty()) {
    if (in.size() < 4) return Frames{out.frames, true};  // the stream ended inside a header
    std::uint64_t length = 0;
    for (int i = 0; i < 4; ++i) length = length << 8 | static_cast<unsigned char>(in[i]);
    if (length > max || in.size() - 4 < length) return Frames{out.frames, true};
    out.frames.emplace_back(in.substr(4, length));
    in.remove_prefix(4 + length);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const std::size_t max = 1 + data[1] % 200;
  const std::size_t cut_bytes = data[2] % 16;
  std::string_view rest(reinterpret_cast<const char*>(data + 3), size - 3);
  std::string_view cuts = rest.substr(0, std::min(cut_bytes, rest.size()));
  std::string_view bytes = rest.substr(cuts.size());
  const std::size_t bound = max + 8 + 2 * pollux::detail::kFrameReadChunk;
  switch (data[0] % 3) {
    case 0:
      if (decode(pollux::LinesCodec(max), bytes, cuts, bound) != lines_reference(bytes, max)) std::abort();
      break;
    case 1:
      if (decode(pollux::LengthDelimitedCodec(max), bytes, cuts, bound) != delimited_reference(bytes, max))
        std::abort();
      break;
    default: {
      Frames got = decode(pollux::BytesCodec(), bytes, cuts, bound);
      std::string joined;
      for (auto& piece : got.frames) joined += piece;
      if (got.error || joined != bytes) std::abort();
    }
  }
  return 0;
}
