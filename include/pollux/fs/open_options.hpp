// OpenOptions: how fs::File opens a path (read, write, append, truncate,
// create, create_new, mode), as Rust's OpenOptions. open(path) is a lazy
// future: the open runs at its first poll, on the caller's thread when the
// path is cached, else on the io_uring ring or the blocking pool.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <filesystem>

#include "pollux/fs/detail/open_file.hpp"
#include "pollux/fs/file.hpp"

namespace pollux::fs {

/// The flags of an open: set what you need, then open(path).
class OpenOptions {
 public:
  /// Open for reading.
  OpenOptions& read(bool on) noexcept { return set(read_, on); }
  /// Open for writing.
  OpenOptions& write(bool on) noexcept { return set(write_, on); }
  /// Every write goes to the end of the file (O_APPEND); implies write.
  OpenOptions& append(bool on) noexcept { return set(append_, on); }
  /// Cut the file to length 0 (O_TRUNC); needs write.
  OpenOptions& truncate(bool on) noexcept { return set(truncate_, on); }
  /// Create the file if it is missing (O_CREAT); needs write or append.
  OpenOptions& create(bool on) noexcept { return set(create_, on); }
  /// Create the file, failing if it exists (O_CREAT | O_EXCL); needs write or append.
  OpenOptions& create_new(bool on) noexcept { return set(create_new_, on); }
  /// The permission bits of a created file, before the umask (default 0666).
  OpenOptions& mode(unsigned bits) noexcept {
    mode_ = bits;
    return *this;
  }

  /// The open(2) flags these options stand for; throws std::invalid_argument
  /// for a combination that means nothing (no access mode, truncate or
  /// create without write).
  int flags() const;

  /// A future of the open File (std::system_error naming the path on failure).
  /// A path the kernel has cached, opened without O_CREAT or O_TRUNC, opens
  /// on the caller's thread (openat2 with RESOLVE_CACHED); any other through
  /// openat on the io_uring ring, or on the blocking pool under epoll.
  detail::OpenFile open(std::filesystem::path path) const {
    return detail::OpenFile(std::move(path), flags(), mode_);  // a bad combination throws here, at the call
  }

 private:
  OpenOptions& set(bool& field, bool on) noexcept {
    field = on;
    return *this;
  }

  bool read_ = false;
  bool write_ = false;
  bool append_ = false;
  bool truncate_ = false;
  bool create_ = false;
  bool create_new_ = false;
  unsigned mode_ = 0666;
};

/// A future of `path` opened for reading.
inline auto File::open(std::filesystem::path path) { return OpenOptions().read(true).open(std::move(path)); }

/// A future of `path` opened for writing, created if missing and cut to length 0.
inline auto File::create(std::filesystem::path path) {
  return OpenOptions().write(true).create(true).truncate(true).open(std::move(path));
}

}  // namespace pollux::fs
