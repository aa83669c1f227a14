// RESP, Redis's protocol, as a codec for FramedRead and FramedWrite: what
// mini_redis reads (requests: arrays of bulk strings) and writes (the five
// reply types). Malformed input is a FrameError whose message is the one
// redis-server sends back ("Protocol error: ..."). fuzz/resp.cpp fuzzes it.
#pragma once

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <utility>
#include <string_view>
#include <variant>
#include <vector>

#include <pollux/pollux.hpp>

namespace resp {

using pollux::BytesBuf;
using pollux::FrameError;
using pollux::Result;
using Command = std::vector<std::string>;

// The five RESP types a reply can be.
struct Simple {
  std::string text;
};
struct Err {
  std::string text;
};
struct Integer {
  long long value;
};
struct Bulk {
  std::optional<std::string> bytes;
};  // nullopt: the null bulk string
struct Array {
  std::vector<std::variant<Bulk, Integer>> items;
};
using Reply = std::variant<Simple, Err, Integer, Bulk, Array>;
template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;  // C++20 deduces it; Clang 14 needs it written

// The codec: requests are arrays of bulk strings (empty lines between them
// are skipped, as redis-server skips them); replies are the five RESP types. Decoding resumes where the last call
// stopped, so a request that arrives in many reads is parsed once, and each argument is copied once.
class RespCodec {
 public:
  using Item = Command;  // a request: the command's name, then its arguments
  using Error = FrameError;
  // Bounds on one request, so that a connection's memory is bounded
  // (redis-server allows more).
  static constexpr long long kMaxBulk = 1 << 20, kMaxArgs = 1024;
  static constexpr std::size_t kMaxRequest = 1 << 20;  // all of a request's bytes

  Result<std::optional<Command>, FrameError> decode(BytesBuf& buffer) {
    for (;;) {
      std::string_view in = buffer.view();
      if (args_left_ < 0) {  // at the start of a request
        // An empty line (redis-cli --pipe ends with one): redis-server
        // takes it as an empty inline command and ignores it.
        if (in.starts_with("\r\n") || in.starts_with('\n')) {
          buffer.consume(in[0] == '\n' ? 1 : 2);
          continue;
        }
        if (in.empty() || in == "\r") return std::optional<Command>();
        auto count = number(in, '*', kMaxArgs);
        if (!count) return std::move(count).error();
        if (!count.value()) return std::optional<Command>();
        args_left_ = *count.value();
      }
      while (args_left_ > 0) {
        if (bulk_ < 0) {
          auto length = number(in, '$', kMaxBulk);
          if (!length) return std::move(length).error();
          if (!length.value()) return std::optional<Command>();
          if (at_ + static_cast<std::size_t>(*length.value()) + 2 > kMaxRequest)
            return FrameError::too_long("request larger than " + std::to_string(kMaxRequest) + " bytes");
          bulk_ = *length.value();
        }
        std::size_t length = static_cast<std::size_t>(bulk_);
        if (in.size() - at_ < length + 2) return std::optional<Command>();  // the rest comes later
        if (in.substr(at_ + length, 2) != "\r\n") return FrameError::malformed("expected CRLF after a bulk string");
        command_.emplace_back(in.substr(at_, length));
        at_ += length + 2;
        bulk_ = -1;
        --args_left_;
      }
      buffer.consume(at_);
      at_ = 0;
      args_left_ = -1;
      return std::optional<Command>(std::exchange(command_, {}));
    }
  }
  Result<void, FrameError> encode(const Reply& reply, BytesBuf& out) {
    auto put = [&](auto&&... parts) { (out.append(std::string_view(parts)), ...); };  // no joined copies
    auto bulk = [&](const Bulk& b) {
      b.bytes ? put("$", std::to_string(b.bytes->size()), "\r\n", *b.bytes, "\r\n") : put("$-1\r\n");
    };
    auto integer = [&](const Integer& i) { put(":", std::to_string(i.value), "\r\n"); };
    // A CR or LF in a status or an error would end it early: redis-server
    // sends them as spaces, and so does this.
    auto line = [&](std::string_view tag, const std::string& text) {
      if (text.find_first_of("\r\n") == std::string::npos) return put(tag, text, "\r\n");
      std::string spaced = text;
      std::replace_if(
          spaced.begin(), spaced.end(), [](char c) { return c == '\r' || c == '\n'; }, ' ');
      put(tag, spaced, "\r\n");
    };
    std::visit(
        Overloaded{[&](const Simple& s) { line("+", s.text); }, [&](const Err& e) { line("-", e.text); }, integer, bulk,
                   [&](const Array& a) {
                     put("*", std::to_string(a.items.size()), "\r\n");
                     for (auto& item : a.items) std::visit(Overloaded{bulk, integer}, item);
                   }},
        reply);
    return {};
  }

 private:
  // A "*<n>\r\n" or "$<n>\r\n" header at at_, 0 <= n <= max: moves at_
  // past it; nullopt while it is not whole.
  Result<std::optional<long long>, FrameError> number(std::string_view in, char tag, long long max) {
    if (at_ >= in.size()) return std::optional<long long>();
    if (in[at_] != tag) return FrameError::malformed(std::string("expected '") + tag + "', got '" + in[at_] + "'");
    std::size_t end = in.find("\r\n", at_);
    if (end == std::string_view::npos && in.size() - at_ <= 25) return std::optional<long long>();  // more to come
    long long n = -1;
    if (end == std::string_view::npos || end - at_ > 24
        || std::from_chars(in.data() + at_ + 1, in.data() + end, n).ptr != in.data() + end || n < 0 || n > max) {
      return FrameError::malformed(tag == '*' ? "invalid multibulk length" : "invalid bulk length");
    }
    at_ = end + 2;
    return std::optional<long long>(n);
  }

  // The request being parsed: its bytes so far, the arguments still to
  // come (-1 before its header), the length of the bulk string whose
  // header was read (-1 if none), and the arguments parsed.
  std::size_t at_ = 0;
  long long args_left_ = -1;
  long long bulk_ = -1;
  Command command_;
};

}  // namespace resp
