// The request side of http_hello and metrics_exporter, apart from the
// socket so that a fuzzer can feed it: bytes arrive in reads of any size
// into free_space(); each whole request head found ("\r\n\r\n") gets one
// answer appended to the output: the server's answer for `GET <path>
// HTTP/1.0|1.1` (http_hello's is 200 and "Hello, world!"), or 400 (and the
// connection is to close) for anything else and for a head over 8 KiB.
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
// Answers that one received() writes before it leaves the rest of a pipelined
// burst for later: a burst of small requests for large answers then costs
// at most this much memory, not the burst times the answer.
constexpr std::size_t kMaxAnswers = 64 * 1024;

/// `GET <path> HTTP/1.0` or `HTTP/1.1` on the first line of a request head.
inline bool request_ok(std::string_view head) {
  std::string_view line = head.substr(0, head.find("\r\n"));
  return line.size() > 4 + 9 && line.starts_with("GET ")
         && (line.ends_with(" HTTP/1.1") || line.ends_with(" HTTP/1.0"));
}

/// The path of a head that request_ok accepted.
inline std::string_view request_path(std::string_view head) {
  std::string_view line = head.substr(0, head.find("\r\n"));
  return line.substr(4, line.size() - 4 - 9);
}

/// An answer with status line `status` (such as "200 OK") and a text body.
inline void append_response(std::string& out, std::string_view status, std::string_view content_type,
                            std::string_view body) {
  out.append("HTTP/1.1 ").append(status).append("\r\nContent-Length: ").append(std::to_string(body.size()));
  out.append("\r\nContent-Type: ").append(content_type).append("\r\n\r\n").append(body);
}

/// Reads request heads from a byte stream and writes the answers.
class RequestReader {
 public:
  /// True when the last received() stopped at kMaxAnswers with requests
  /// left: write `out`, then call received(0, out) before reading more.
  bool unanswered() const noexcept { return unanswered_; }

  /// True while bytes of a request head that is not whole yet are held.
  bool partial() const noexcept { return have_ != 0; }

  /// Where the next read goes; never empty while the connection is open.
  std::span<char> free_space() noexcept { return std::span<char>(in_).subspan(have_); }

  /// `n` bytes arrived in free_space(): answers every whole request among
  /// them (appended to `out`) with "Hello, world!". Returns false once the
  /// connection must close after `out` is written (a 400 was answered).
  bool received(std::size_t n, std::string& out) {
    return received(n, out, [](std::string_view, std::string& answer) { answer.append(kHello); });
  }

  /// As received(n, out), with `answer(path, out)` appending the answer to
  /// each well-formed GET.
  template <class Answer>
  bool received(std::size_t n, std::string& out, Answer&& answer) {
    have_ += n;
    unanswered_ = false;
    std::size_t start = 0;  // the first byte not answered yet
    const std::size_t full = out.size() + kMaxAnswers;
    for (;;) {
      if (out.size() >= full) {
        unanswered_ = true;  // the rest waits until `out` is written
        break;
      }
      std::string_view unread(in_.data() + scan_, have_ - scan_);
      std::size_t blank = unread.find("\r\n\r\n");
      if (blank == std::string_view::npos) {
        scan_ = std::max(have_ >= 3 ? have_ - 3 : 0, start);
        if (have_ - start > kMaxHead) return reject(out);
        break;
      }
      std::size_t end = scan_ + blank + 4;
      std::string_view head(in_.data() + start, end - start);
      if (end - start > kMaxHead || !request_ok(head)) return reject(out);
      answer(request_path(head), out);
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

  // Once no whole request is left unanswered, at most kMaxHead bytes stay
  // after received(), so a read always has at least kMaxHead bytes of room.
  std::array<char, 2 * kMaxHead> in_{};
  std::size_t have_ = 0, scan_ = 0;  // bytes in in_; where the search for "\r\n\r\n" goes on
  bool unanswered_ = false;
};

}  // namespace http
