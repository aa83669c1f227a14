// Metadata: what stat says of a file (size, type, permissions, times),
// given by fs::metadata(path) and File::metadata() (from stat(2), or
// statx(2) where the io_uring ring asked). A plain value.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <sys/stat.h>

#include <chrono>
#include <cstdint>

namespace pollux::fs {

/// The kind of a file system entry.
enum class FileType : std::uint8_t { Regular, Directory, Symlink, Other };

/// A file's size, type, permissions and modification time, as stat gave them.
struct Metadata {
  /// The size in bytes.
  std::uint64_t len = 0;
  /// Regular file, directory, symbolic link (from symlink_metadata only) or something else.
  FileType type = FileType::Other;
  /// The permission bits (st_mode & 07777).
  std::uint32_t permissions = 0;
  /// The last modification.
  std::chrono::system_clock::time_point modified;

  /// Whether it is a regular file.
  bool is_file() const noexcept { return type == FileType::Regular; }
  /// Whether it is a directory.
  bool is_dir() const noexcept { return type == FileType::Directory; }
  /// Whether it is a symbolic link.
  bool is_symlink() const noexcept { return type == FileType::Symlink; }

  /// The metadata in a struct stat.
  static Metadata from_stat(const struct ::stat& st) noexcept {
    return from_parts(static_cast<std::uint64_t>(st.st_size), st.st_mode, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  }

  /// The metadata in a struct statx (asked with at least STATX_BASIC_STATS).
  static Metadata from_statx(const struct ::statx& st) noexcept {
    return from_parts(st.stx_size, st.stx_mode, st.stx_mtime.tv_sec, st.stx_mtime.tv_nsec);
  }

 private:
  static Metadata from_parts(std::uint64_t size, unsigned mode, std::int64_t mtime_sec,
                             std::int64_t mtime_nsec) noexcept {
    Metadata m;
    m.len = size;
    m.type = S_ISREG(mode)   ? FileType::Regular
             : S_ISDIR(mode) ? FileType::Directory
             : S_ISLNK(mode) ? FileType::Symlink
                             : FileType::Other;
    m.permissions = mode & 07777;
    m.modified = std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
        std::chrono::seconds(mtime_sec) + std::chrono::nanoseconds(mtime_nsec)));
    return m;
  }
};

}  // namespace pollux::fs
