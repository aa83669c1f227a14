// The request side of http_hello, apart from the socket so that a fuzzer
// can feed it: bytes arrive in reads of any size into free_space(); each
// whole request head found ("\r\n\r\n") gets one answer appended to the
// output, 200 for `GET <path> HTTP/1.0|1.1`, or 400 (and the connection is
// to close) for anything else and for a head over 8 KiB.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace http {

constexpr std::string_view kHello =
    "HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, world!";
constexpr std::string_view kBadRequest =
    "HTTP/1.1 400 Bad Request\r\nContent-Length: 11\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
    "Bad Request";
constexpr std::size_t kMaxHead = 8192;  // the longest request head, "\r\n\r\n" included

/// `GET <path> HTTP/1.0` or `HTTP/1.1` on the first line of a request head.
inline bool request_ok(std::string_view head) {
  std::string_view line = head.substr(0, head.find("\r\n"));
  return line.size() > 4 + 9 && line.starts_with("GET ")
         && (line.ends_with(" HTTP/1.1") || line.ends_with(" HTTP/1.0"));
}

/// Reads request heads from a byte stream and writes the answers.
class RequestReader {
 public:
  /// Where the next read goes; never empty while the connection is open.
  std::span<char> free_space() noexcept { return std::span<char>(in_).subspan(have_); }

  /// `n` bytes arrived in free_space(): answers every whole request among
  /// them (appended to `out`). Returns false once the connection must close
  /// after `out` is written (a 400 was answered).
  bool received(std::size_t n, std::string& out) {
    have_ += n;
    std::size_t start = 0;  // the first byte not answered yet
    for (;;) {
      std::string_view unread(in_.data() + scan_, have_ - scan_);
      std::size_t blank = unread.find("\r\n\r\n");
      if (blank == std::string_view::npos) {
        scan_ = std::max(have_ >= 3 ? have_ - 3 : 0, start);
        if (have_ - start > kMaxHead) return reject(out);
        break;
      }
      std::size_t end = scan_ + blank + 4;
      if (end - start > kMaxHead || !request_ok(std::string_view(in_.data() + start, end - start))) return reject(out);
      out.append(kHello);
      start = scan_ = end;
    }
    std::memmove(in_.data(), in_.data() + start, have_ - start);
    have_ -= start;
    scan_ -= start;
    return true;
  }

 private:
  static bool reject(std::string& out) {
    out.append(kBadRequest);
    return false;
  }

  // At most kMaxHead unanswered bytes stay after received(), so a read
  // always has at least kMaxHead bytes of room.
  std::array<char, 2 * kMaxHead> in_{};
  std::size_t have_ = 0, scan_ = 0;  // bytes in in_; where the search for "\r\n\r\n" goes on
};

}  // namespace http
