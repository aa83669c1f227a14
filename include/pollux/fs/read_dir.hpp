// read_dir(path): a directory's entries as a Stream, read on the blocking
// pool a batch at a time (one hand-off per 256 entries, not one per entry).
// Lazy: the directory opens at the first poll. Destroyed while the pool
// reads, the stream lets go of its waker and the batch is dropped; the
// directory closes once the pool is done with it.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/fs/metadata.hpp"
#include "pollux/runtime/spawn_blocking.hpp"

namespace pollux::fs {

/// One entry of a directory ("." and ".." are left out).
class DirEntry {
 public:
  /// The entry's path: the directory's path joined with its name.
  DirEntry(std::filesystem::path path, FileType type) : path_(std::move(path)), type_(type) {}
  /// The directory's path joined with the entry's name.
  const std::filesystem::path& path() const noexcept { return path_; }
  /// The entry's name alone.
  std::filesystem::path file_name() const { return path_.filename(); }
  /// Its type as the directory records it (a symbolic link is Symlink, not followed).
  FileType file_type() const noexcept { return type_; }

 private:
  std::filesystem::path path_;
  FileType type_;
};

namespace detail {
/// An open directory stream shared by the ReadDir and its pool job.
class DirHandle;
/// One batch from the pool: entries, or an error, and whether the directory ended.
struct DirBatch {
  std::vector<DirEntry> entries;
  int error = 0;
  bool end = false;
};
}  // namespace detail

/// The stream of read_dir(path): each DirEntry once, in the directory's
/// order; an error (std::system_error naming the path) ends it.
class ReadDir {
 public:
  using Item = DirEntry;

  /// The stream of the directory at `path`.
  explicit ReadDir(std::filesystem::path path);
  ReadDir(ReadDir&&) noexcept;
  ReadDir& operator=(ReadDir&&) = delete;
  ~ReadDir();

  /// The next entry, or nullopt once the directory is read through.
  Poll<std::optional<DirEntry>> poll_next(Context& cx);

 private:
  std::filesystem::path path_;
  Arc<detail::DirHandle> dir_;  // opened by the first batch
  std::optional<BlockingHandle<detail::DirBatch>> batch_;
  std::vector<DirEntry> entries_;
  std::size_t next_ = 0;
  bool end_ = false;
};

/// The entries of the directory at `path`, as a Stream of DirEntry.
inline ReadDir read_dir(std::filesystem::path path) { return ReadDir(std::move(path)); }

}  // namespace pollux::fs
