// ScriptedIo: an in-memory reader and writer whose every read and write the
// test decides: the chunks a read gives (split anywhere), when it is
// Pending, when it fails; how much a write takes, and when it is blocked.
// What the codec and sink suites drive Framed with.
#pragma once

#include <cerrno>
#include <cstring>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <system_error>

#include "pollux/pollux.hpp"

namespace test {

struct Script {
  std::deque<std::string> chunks;  // what the next reads give, one chunk (or less) each
  bool ended = false;              // after the chunks: the end of the stream
  int read_error = 0;              // after the chunks: this errno, thrown
  pollux::Waker reader;
  std::string written;
  std::size_t writes = 0;            // poll_write calls that wrote something
  std::size_t max_write = SIZE_MAX;  // the most one write takes
  bool write_blocked = false;        // writes are Pending while set
  int write_error = 0;               // writes throw this errno
  pollux::Waker writer;
  bool shut_down = false;

  void feed(std::string chunk) {
    chunks.push_back(std::move(chunk));
    std::move(reader).wake();
  }
  void end() {
    ended = true;
    std::move(reader).wake();
  }
  void unblock() {
    write_blocked = false;
    std::move(writer).wake();
  }
};

class ScriptedIo {
 public:
  explicit ScriptedIo(std::shared_ptr<Script> script) : script_(std::move(script)) {}

  pollux::Poll<std::size_t> poll_read(pollux::Context& cx, std::span<std::byte> buffer) {
    Script& s = *script_;
    if (!s.chunks.empty()) {
      std::string& chunk = s.chunks.front();
      std::size_t n = std::min(chunk.size(), buffer.size());
      std::memcpy(buffer.data(), chunk.data(), n);
      chunk.erase(0, n);
      if (chunk.empty()) s.chunks.pop_front();
      return pollux::ready(n);
    }
    if (s.read_error != 0) throw std::system_error(s.read_error, std::generic_category(), "scripted read");
    if (s.ended) return pollux::ready(std::size_t{0});
    s.reader = cx.waker();
    return pollux::pending;
  }
  void abandon(pollux::Interest interest) noexcept {
    (interest == pollux::Interest::Read ? script_->reader : script_->writer) = pollux::Waker();
  }

  pollux::Poll<std::size_t> poll_write(pollux::Context& cx, std::span<const std::byte> bytes) {
    Script& s = *script_;
    if (s.write_error != 0) throw std::system_error(s.write_error, std::generic_category(), "scripted write");
    if (s.write_blocked) {
      s.writer = cx.waker();
      return pollux::pending;
    }
    std::size_t n = std::min(bytes.size(), s.max_write);
    s.written.append(reinterpret_cast<const char*>(bytes.data()), n);
    ++s.writes;
    return pollux::ready(n);
  }
  pollux::Poll<void> poll_shutdown(pollux::Context&) {
    script_->shut_down = true;
    return pollux::ready();
  }

 private:
  std::shared_ptr<Script> script_;
};

// Polls a stream until it is Pending or ended; the items it gave.
template <class S>
std::vector<pollux::item_t<S>> drain(S& stream, bool* ended = nullptr) {
  std::vector<pollux::item_t<S>> items;
  pollux::Context cx(pollux::noop_waker());
  for (;;) {
    auto item = stream.poll_next(cx);
    if (item.is_pending()) break;
    if (!item.value()) {
      if (ended != nullptr) *ended = true;
      break;
    }
    items.push_back(std::move(*item.value()));
  }
  return items;
}

}  // namespace test
