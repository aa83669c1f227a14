// RESP, Redis's protocol, as a codec for FramedRead and FramedWrite: what
// mini_redis reads (requests: arrays of bulk strings) and writes (the five
// reply types). Malformed input is a FrameError whose message is the one
// redis-server sends back ("Protocol error: ..."). fuzz/resp.cpp fuzzes it.
#pragma once

#include <charconv>
#include <optional>
#include <string>
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

// The codec: requests are arrays of bulk strings; replies are the five RESP types.
class RespCodec {
 public:
  using Item = Command;  // a request: the command's name, then its arguments
  using Error = FrameError;
  static constexpr long long kMaxBulk = 1 << 20, kMaxArgs = 1024;  // bounds memory; redis-server allows more
  Result<std::optional<Command>, FrameError> decode(BytesBuf& buffer) {
    if (buffer.size() < need_) return std::optional<Command>();
    std::string_view in = buffer.view();
    std::size_t at = 0;
    auto number = [&](char tag, long long max) -> Result<std::optional<long long>, FrameError> {
      if (at < in.size() && in[at] != tag)
        return FrameError::malformed(std::string("expected '") + tag + "', got '" + in[at] + "'");
      std::size_t end = in.find("\r\n", at);
      if (end == std::string_view::npos && in.size() - at <= 25) return std::optional<long long>();  // more to come
      long long n = -1;
      if (end == std::string_view::npos || end - at > 24
          || std::from_chars(in.data() + at + 1, in.data() + end, n).ptr != in.data() + end || n < 0 || n > max) {
        return FrameError::malformed(tag == '*' ? "invalid multibulk length" : "invalid bulk length");
      }
      at = end + 2;
      return std::optional<long long>(n);
    };
    auto count = number('*', kMaxArgs);
    if (!count) return std::move(count).error();
    if (!count.value()) return std::optional<Command>();
    Command command;
    for (long long i = 0; i < *count.value(); ++i) {
      auto length = number('$', kMaxBulk);
      if (!length) return std::move(length).error();
      if (!length.value()) return std::optional<Command>();
      if (in.size() - at < static_cast<std::size_t>(*length.value()) + 2) {
        need_ = at + *length.value() + 2;  // do not parse again before the whole bulk came
        return std::optional<Command>();
      }
      command.emplace_back(in.substr(at, *length.value()));
      at += *length.value() + 2;
    }
    need_ = 0;
    buffer.consume(at);
    return std::optional<Command>(std::move(command));
  }

  Result<void, FrameError> encode(const Reply& reply, BytesBuf& out) {
    auto put = [&](auto&&... parts) { (out.append(std::string_view(parts)), ...); };  // no joined copies
    auto bulk = [&](const Bulk& b) {
      b.bytes ? put("$", std::to_string(b.bytes->size()), "\r\n", *b.bytes, "\r\n") : put("$-1\r\n");
    };
    auto integer = [&](const Integer& i) { put(":", std::to_string(i.value), "\r\n"); };
    std::visit(Overloaded{[&](const Simple& s) { put("+", s.text, "\r\n"); },
                          [&](const Err& e) { put("-", e.text, "\r\n"); }, integer, bulk,
                          [&](const Array& a) {
                            put("*", std::to_string(a.items.size()), "\r\n");
                            for (auto& item : a.items) std::visit(Overloaded{bulk, integer}, item);
                          }},
               reply);
    return {};
  }

 private:
  std::size_t need_ = 0;  // bytes needed before a frame can be whole
};

}  // namespace resp
