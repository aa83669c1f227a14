// Fuzzes mini_redis's RESP codec with the input cut into reads of sizes the
// input picks: however the bytes arrive, it finds the same requests (or
// the same protocol error) as when they come in one read, and never
// buffers more than its largest request and a read.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "../examples/resp.hpp"
#include "cut_reader.hpp"

namespace {

// Every request, then "error: <message>" for an error.
std::vector<std::string> requests(std::string_view bytes, std::string_view cuts) {
  pollux::FramedRead framed(fuzz::CutReader(bytes, cuts, 61), resp::RespCodec());
  pollux::Context cx(pollux::noop_waker());
  std::vector<std::string> out;
  for (;;) {
    auto item = framed.poll_next(cx);
    if (item.is_pending()) std::abort();
    if (framed.read_buffer().capacity() > 2 * (resp::RespCodec::kMaxBulk + 64) + 2 * (1 << 20)) std::abort();
    if (!item.value()) return out;
    if (!*item.value()) {
      out.push_back("error: " + item.value()->error().message());
      continue;
    }
    std::string joined;
    for (auto& arg : item.value()->value()) joined += std::to_string(arg.size()) + ":" + arg + ",";
    out.push_back(joined);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string_view cuts = rest.substr(0, std::min<std::size_t>(data[0] % 16, rest.size()));
  std::string_view bytes = rest.substr(cuts.size());
  if (requests(bytes, cuts) != requests(bytes, {})) std::abort();
  return 0;
}
