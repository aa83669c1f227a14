// Fuzzes http_hello's request reader with a byte stream cut into reads of
// sizes the input picks. Whatever the bytes and however they arrive, the
// answers are exactly those a plain reference scan of the whole stream
// gives: one 200 per well-formed head in order, then one 400 at the first
// bad or oversized head, and nothing after it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "../examples/http_request.hpp"

namespace {

// What the server must answer to `stream` read whole.
std::string reference(std::string_view stream) {
  std::string out;
  for (;;) {
    std::size_t blank = stream.find("\r\n\r\n");
    if (blank == std::string_view::npos) {
      if (stream.size() > http::kMaxHead) out.append(http::kBadRequest);
      return out;
    }
    std::string_view head = stream.substr(0, blank + 4);
    if (head.size() > http::kMaxHead || !http::request_ok(head)) {
      out.append(http::kBadRequest);
      return out;
    }
    out.append(http::kHello);
    stream.remove_prefix(head.size());
  }
}

}  // namespace

// The first byte seeds the read sizes; the rest is the stream.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::uint32_t seed = data[0] * 2654435761u + 1;
  std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);

  http::RequestReader reader;
  std::string out;
  bool open = true;
  std::size_t fed = 0;
  while (open && fed < stream.size()) {
    seed = seed * 1103515245u + 12345u;
    std::size_t chunk = 1 + (seed >> 16) % 3000;
    auto room = reader.free_space();
    if (room.size() < http::kMaxHead) std::abort();  // a read always has room for a whole head
    std::size_t n = std::min({chunk, room.size(), stream.size() - fed});
    std::memcpy(room.data(), stream.data() + fed, n);
    fed += n;
    open = reader.received(n, out);
    while (open && reader.unanswered()) open = reader.received(0, out);
  }
  std::string expected = reference(stream.substr(0, fed));
  // A 400 stops the reading: the reference must agree up to where it stopped.
  if (open ? out != expected : out != expected.substr(0, out.size()) || !out.ends_with(http::kBadRequest)) {
    std::abort();
  }
  return 0;
}
