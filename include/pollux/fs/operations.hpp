// The whole-file and path operations of pollux::fs: read, read_to_string,
// write, metadata, create_dir_all, remove_file, rename, copy and the rest,
// each one future whose work runs on the blocking pool in one hand-off
// (open, read and close together: one trip to the pool per call, not three).
// Lazy: nothing runs before the first poll. Failures are std::system_error
// naming the operation and the path. Destroyed before it is Ready, the
// future lets go of its waker; the operation still finishes on the pool
// (a rename or a write cannot be half undone), its result dropped.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pollux/fs/detail/blocking_call.hpp"
#include "pollux/fs/metadata.hpp"

namespace pollux::fs {

namespace detail {
// The blocking bodies, run on a pool thread (src/fs/operations.cpp).
std::vector<std::byte> read_now(const std::filesystem::path& path);
// The whole of a cached file without waiting on the device, or nullopt
// (nothing cached, or a special file): openat2 with RESOLVE_CACHED, then
// preadv2 with RWF_NOWAIT. Never blocks; errors other than "would wait"
// are thrown as read_now throws them.
std::optional<std::vector<std::byte>> try_read_cached(const std::filesystem::path& path);
std::optional<std::string> try_read_to_string_cached(const std::filesystem::path& path);
std::string read_to_string_now(const std::filesystem::path& path);
void write_now(const std::filesystem::path& path, std::span<const std::byte> contents);
Metadata metadata_now(const std::filesystem::path& path, bool follow);
void create_dir_now(const std::filesystem::path& path, bool all);
void remove_file_now(const std::filesystem::path& path);
void remove_dir_now(const std::filesystem::path& path, bool all);
void rename_now(const std::filesystem::path& from, const std::filesystem::path& to);
std::uint64_t copy_now(const std::filesystem::path& from, const std::filesystem::path& to);
bool exists_now(const std::filesystem::path& path);
}  // namespace detail

/// A future of the whole file at `path`. A file the kernel has cached is
/// read on the caller's thread with no hand-off; any other on the pool.
inline auto read(std::filesystem::path path) {
  auto attempt = [path] { return detail::try_read_cached(path); };
  return pollux::detail::BlockingCall([path = std::move(path)] { return detail::read_now(path); },
                                      "pollux::fs::read: the runtime shut down first", std::move(attempt));
}

/// A future of the whole file at `path` as a string (its bytes as they
/// are: no encoding is checked); cached or not, as read().
inline auto read_to_string(std::filesystem::path path) {
  auto attempt = [path] { return detail::try_read_to_string_cached(path); };
  return pollux::detail::BlockingCall([path = std::move(path)] { return detail::read_to_string_now(path); },
                                      "pollux::fs::read_to_string: the runtime shut down first", std::move(attempt));
}

/// A future that makes `path` hold exactly `contents` (created if missing,
/// cut to length 0 first). The future owns the bytes.
inline auto write(std::filesystem::path path, std::string contents) {
  return pollux::detail::BlockingCall(
      [path = std::move(path), contents = std::move(contents)] {
        detail::write_now(path, std::as_bytes(std::span(contents)));
      },
      "pollux::fs::write: the runtime shut down first");
}

/// The same for bytes.
inline auto write(std::filesystem::path path, std::vector<std::byte> contents) {
  return pollux::detail::BlockingCall(
      [path = std::move(path), contents = std::move(contents)] { detail::write_now(path, contents); },
      "pollux::fs::write: the runtime shut down first");
}

/// A future of the Metadata of `path`, following symbolic links.
inline auto metadata(std::filesystem::path path) {
  return pollux::detail::BlockingCall([path = std::move(path)] { return detail::metadata_now(path, true); },
                                      "pollux::fs::metadata: the runtime shut down first");
}

/// A future of the Metadata of `path` itself, a symbolic link not followed.
inline auto symlink_metadata(std::filesystem::path path) {
  return pollux::detail::BlockingCall([path = std::move(path)] { return detail::metadata_now(path, false); },
                                      "pollux::fs::symlink_metadata: the runtime shut down first");
}

/// A future of whether `path` names something (false, not an error, when it does not).
inline auto try_exists(std::filesystem::path path) {
  return pollux::detail::BlockingCall([path = std::move(path)] { return detail::exists_now(path); },
                                      "pollux::fs::try_exists: the runtime shut down first");
}

/// A future that makes the directory `path` (its parent must exist).
inline auto create_dir(std::filesystem::path path) {
  return pollux::detail::BlockingCall([path = std::move(path)] { detail::create_dir_now(path, false); },
                                      "pollux::fs::create_dir: the runtime shut down first");
}

/// A future that makes the directory `path` and every missing parent; one that exists is fine.
inline auto create_dir_all(std::filesystem::path path) {
  return pollux::detail::BlockingCall([path = std::move(path)] { detail::create_dir_now(path, true); },
                                      "pollux::fs::create_dir_all: the runtime shut down first");
}

/// A future that removes the file (or symbolic link) `path`.
inline auto remove_file(std::filesystem::path path) {
  return pollux::detail::BlockingCall([path = std::move(path)] { detail::remove_file_now(path); },
                                      "pollux::fs::remove_file: the runtime shut down first");
}

/// A future that removes the empty directory `path`.
inline auto remove_dir(std::filesystem::path path) {
  return pollux::detail::BlockingCall([path = std::move(path)] { detail::remove_dir_now(path, false); },
                                      "pollux::fs::remove_dir: the runtime shut down first");
}

/// A future that removes the directory `path` and everything under it.
inline auto remove_dir_all(std::filesystem::path path) {
  return pollux::detail::BlockingCall([path = std::move(path)] { detail::remove_dir_now(path, true); },
                                      "pollux::fs::remove_dir_all: the runtime shut down first");
}

/// A future that renames `from` to `to`, replacing a file there (rename(2)).
inline auto rename(std::filesystem::path from, std::filesystem::path to) {
  return pollux::detail::BlockingCall([from = std::move(from), to = std::move(to)] { detail::rename_now(from, to); },
                                      "pollux::fs::rename: the runtime shut down first");
}

/// A future that copies the file `from` to `to` (created or replaced, with
/// `from`'s permissions), Ready with the bytes copied; the kernel copies
/// (copy_file_range) where it can.
inline auto copy(std::filesystem::path from, std::filesystem::path to) {
  return pollux::detail::BlockingCall(
      [from = std::move(from), to = std::move(to)] { return detail::copy_now(from, to); },
      "pollux::fs::copy: the runtime shut down first");
}

}  // namespace pollux::fs
