// The blocking bodies of pollux::fs's whole-file and path operations, each
// run on a pool thread in one piece.

#include "pollux/fs/operations.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "pollux/fs/detail/open_file.hpp"

namespace pollux::fs::detail {

namespace {

[[noreturn]] void fail(int error, const char* operation, const std::filesystem::path& path) {
  throw std::system_error(error, std::generic_category(),
                          std::string("pollux::fs::") + operation + "(" + path.string() + ")");
}

[[noreturn]] void fail(const std::error_code& error, const char* operation, const std::filesystem::path& path) {
  throw std::system_error(error, std::string("pollux::fs::") + operation + "(" + path.string() + ")");
}

// A descriptor closed at the end of its scope.
class ScopedFd {
 public:
  ScopedFd(const std::filesystem::path& path, int flags, const char* operation, mode_t mode = 0666) {
    do {
      fd_ = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    } while (fd_ < 0 && errno == EINTR);
    if (fd_ < 0) fail(errno, operation, path);
  }
  ~ScopedFd() { ::close(fd_); }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

// Reads the whole of `path` into a container of chars or bytes, sized by
// fstat first so that a regular file is read with no copy and no regrowth.
template <class Container>
Container read_whole(const std::filesystem::path& path, const char* operation) {
  ScopedFd fd(path, O_RDONLY, operation);
  struct ::stat st {};
  if (::fstat(fd.get(), &st) != 0) fail(errno, operation, path);
  Container out;
  std::size_t size = S_ISREG(st.st_mode) ? static_cast<std::size_t>(st.st_size) : 0;
  out.resize(size + 1);  // one more: the end is seen in the same read when the size was right
  std::size_t filled = 0;
  for (;;) {
    if (filled == out.size()) out.resize(out.size() < 4096 ? 8192 : out.size() * 2);
    ssize_t n = ::read(fd.get(), out.data() + filled, out.size() - filled);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno, operation, path);
    }
    if (n == 0) break;
    filled += static_cast<std::size_t>(n);
  }
  out.resize(filled);
  return out;
}

// The cached-file attempt: openat2(RESOLVE_CACHED) fails with EAGAIN
// unless every path component is in the dentry cache, and preadv2 with
// RWF_NOWAIT unless the bytes are in the page cache: neither ever waits.
template <class Container>
std::optional<Container> read_cached(const std::filesystem::path& path, const char* operation) {
  CachedOpen opened = open_cached(path, O_RDONLY);  // O_NONBLOCK stays: nothing here waits on it
  if (opened.fd < 0) {
    if (opened.error != 0) fail(opened.error, operation, path);  // a missing file is as missing on the pool
    return std::nullopt;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{opened.fd};
  int fd = opened.fd;
  Container out;
  out.resize(static_cast<std::size_t>(opened.size) + 1);  // one more: the end seen in the same read
  std::size_t filled = 0;
  for (;;) {
    if (filled == out.size()) out.resize(out.size() * 2);
    iovec iov{out.data() + filled, out.size() - filled};
    ssize_t n = ::preadv2(fd, &iov, 1, static_cast<off_t>(filled), RWF_NOWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EOPNOTSUPP || errno == EINTR) return std::nullopt;
      fail(errno, operation, path);
    }
    if (n == 0) break;
    filled += static_cast<std::size_t>(n);
  }
  out.resize(filled);
  return out;
}

}  // namespace

std::optional<std::vector<std::byte>> try_read_cached(const std::filesystem::path& path) {
  return read_cached<std::vector<std::byte>>(path, "read");
}

std::optional<std::string> try_read_to_string_cached(const std::filesystem::path& path) {
  return read_cached<std::string>(path, "read_to_string");
}

std::vector<std::byte> read_now(const std::filesystem::path& path) {
  return read_whole<std::vector<std::byte>>(path, "read");
}

std::string read_to_string_now(const std::filesystem::path& path) {
  return read_whole<std::string>(path, "read_to_string");
}

void write_now(const std::filesystem::path& path, std::span<const std::byte> contents) {
  ScopedFd fd(path, O_WRONLY | O_CREAT | O_TRUNC, "write");
  std::size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd.get(), contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno, "write", path);
    }
    done += static_cast<std::size_t>(n);
  }
}

Metadata metadata_now(const std::filesystem::path& path, bool follow) {
  struct ::stat st {};
  int rc = follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st);
  if (rc != 0) fail(errno, follow ? "metadata" : "symlink_metadata", path);
  return Metadata::from_stat(st);
}

bool exists_now(const std::filesystem::path& path) {
  struct ::stat st {};
  if (::stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  fail(errno, "try_exists", path);
}

void create_dir_now(const std::filesystem::path& path, bool all) {
  if (!all) {
    if (::mkdir(path.c_str(), 0777) != 0) fail(errno, "create_dir", path);
    return;
  }
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) fail(error, "create_dir_all", path);
}

void remove_file_now(const std::filesystem::path& path) {
  if (::unlink(path.c_str()) != 0) fail(errno, "remove_file", path);
}

void remove_dir_now(const std::filesystem::path& path, bool all) {
  if (!all) {
    if (::rmdir(path.c_str()) != 0) fail(errno, "remove_dir", path);
    return;
  }
  std::error_code error;
  std::filesystem::remove_all(path, error);
  if (error) fail(error, "remove_dir_all", path);
}

void rename_now(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) fail(errno, "rename", from);
}

std::uint64_t copy_now(const std::filesystem::path& from, const std::filesystem::path& to) {
  ScopedFd in(from, O_RDONLY, "copy");
  struct ::stat st {};
  if (::fstat(in.get(), &st) != 0) fail(errno, "copy", from);
  ScopedFd out(to, O_WRONLY | O_CREAT | O_TRUNC, "copy", st.st_mode & 07777);
  std::uint64_t copied = 0;
  bool kernel_copy = true;
  char buffer[64 * 1024];
  for (;;) {
    ssize_t n;
    if (kernel_copy) {
      n = ::copy_file_range(in.get(), nullptr, out.get(), nullptr, std::size_t{1} << 30, 0);
      if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) && copied == 0) {
        kernel_copy = false;  // across file systems or a kind it cannot copy: read and write
        continue;
      }
    } else {
      n = ::read(in.get(), buffer, sizeof buffer);
      if (n > 0) {
        ssize_t written = 0;
        while (written < n) {
          ssize_t w = ::write(out.get(), buffer + written, static_cast<std::size_t>(n - written));
          if (w < 0 && errno == EINTR) continue;
          if (w < 0) fail(errno, "copy", to);
          written += w;
        }
      }
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno, "copy", from);
    }
    if (n == 0) break;
    copied += static_cast<std::uint64_t>(n);
  }
  if (::fchmod(out.get(), st.st_mode & 07777) != 0) fail(errno, "copy", to);
  return copied;
}

}  // namespace pollux::fs::detail
