// ReadDir: batches of a directory's entries, read on the blocking pool.

#include "pollux/fs/read_dir.hpp"

#include <dirent.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "pollux/core/try_ready.hpp"

namespace pollux::fs {

namespace detail {

class DirHandle : public RefCounted<DirHandle> {
 public:
  DirHandle() = default;
  ~DirHandle() {
    if (dir != nullptr) ::closedir(dir);
  }
  DirHandle(const DirHandle&) = delete;
  DirHandle& operator=(const DirHandle&) = delete;
  DIR* dir = nullptr;  // opened by the first batch, on the pool
};

namespace {

constexpr std::size_t kBatch = 256;

FileType type_of(unsigned char d_type) {
  switch (d_type) {
    case DT_REG:
      return FileType::Regular;
    case DT_DIR:
      return FileType::Directory;
    case DT_LNK:
      return FileType::Symlink;
    default:
      return FileType::Other;
  }
}

DirBatch read_batch(DirHandle& handle, const std::filesystem::path& path) {
  DirBatch batch;
  if (handle.dir == nullptr) {
    handle.dir = ::opendir(path.c_str());
    if (handle.dir == nullptr) {
      batch.error = errno;
      return batch;
    }
  }
  while (batch.entries.size() < kBatch) {
    errno = 0;
    dirent* entry = ::readdir(handle.dir);
    if (entry == nullptr) {
      batch.error = errno;
      batch.end = true;
      break;
    }
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    batch.entries.emplace_back(path / entry->d_name, type_of(entry->d_type));
  }
  return batch;
}

}  // namespace
}  // namespace detail

ReadDir::ReadDir(std::filesystem::path path) : path_(std::move(path)) {}
ReadDir::ReadDir(ReadDir&& other) noexcept = default;
ReadDir::~ReadDir() = default;  // a batch in flight holds the directory until it is done

Poll<std::optional<DirEntry>> ReadDir::poll_next(Context& cx) {
  for (;;) {
    if (next_ < entries_.size()) return Poll<std::optional<DirEntry>>(std::in_place, std::move(entries_[next_++]));
    if (end_) return Poll<std::optional<DirEntry>>(std::in_place, std::nullopt);
    if (!batch_) {
      if (!dir_) dir_ = make_arc<detail::DirHandle>();
      batch_.emplace(spawn_blocking([dir = dir_, path = path_] { return detail::read_batch(*dir, path); }));
    }
    POLLUX_TRY_READY_ASSIGN(auto batch, batch_->poll(cx));
    batch_.reset();
    if (!batch)
      throw std::system_error(ECANCELED, std::generic_category(), "pollux::fs::read_dir: the runtime shut down first");
    detail::DirBatch got = std::move(batch).value();
    end_ = got.end || got.error != 0;
    if (got.error != 0) {
      throw std::system_error(got.error, std::generic_category(), "pollux::fs::read_dir(" + path_.string() + ")");
    }
    entries_ = std::move(got.entries);
    next_ = 0;
  }
}

}  // namespace pollux::fs
