// fs VARIANT [N] [DIR=/tmp]
//   read64k           N reads of 64 KiB at offset 0 of a cached 64 KiB file (File::read_at)
//   read64k_blocking  the same with pread(2) on this thread: the floor
//   read16m           N whole-file reads (fs::read) of a 16 MiB file
//   small_read        N whole-file reads of a 4 KiB file
//   small_write       N whole-file writes (fs::write) of 4 KiB
//   write4k           N writes of 4 KiB at offset 0 of an open file (File::write_at)
// A current-thread runtime; each read's bytes are checked once.
#include <fcntl.h>
#include <unistd.h>

#include <pollux/fs.hpp>
#include <pollux/pollux.hpp>

#include <string>
#include <vector>

#include "common.hpp"
#include "repeat.hpp"

using namespace pollux;

namespace {

std::string make_file(const std::string& dir, const char* name, std::size_t size) {
  std::string path = dir + "/pollux-bench-" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  std::string data(size, 'f');
  if (fd < 0 || ::write(fd, data.data(), size) != static_cast<ssize_t>(size)) bench::die("cannot write " + path);
  ::close(fd);
  return path;
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string variant = args.str(0, "read64k");
  std::uint64_t n = args.num(1, 20000);
  std::string dir = args.str(2, "/tmp");
  auto rt = Runtime::current_thread();
  double seconds = 0;
  if (variant == "read64k" || variant == "read64k_blocking") {
    std::string path = make_file(dir, "64k", 64 * 1024);
    std::vector<std::byte> buffer(64 * 1024);
    if (variant == "read64k_blocking") {
      int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      auto t0 = bench::Clock::now();
      for (std::uint64_t i = 0; i < n; ++i) {
        if (::pread(fd, buffer.data(), buffer.size(), 0) != 65536) bench::die("short read");
      }
      seconds = bench::secs_since(t0);
      ::close(fd);
    } else {
      fs::File file = rt.block_on(fs::File::open(path));
      auto t0 = bench::Clock::now();
      rt.block_on(bench::Repeat(n, [&](std::uint64_t) { return file.read_at(buffer, 0); }));
      seconds = bench::secs_since(t0);
    }
    if (buffer[65535] != std::byte{'f'}) bench::die("wrong bytes");
  } else if (variant == "read16m" || variant == "small_read") {
    std::size_t size = variant == "read16m" ? std::size_t{16} << 20 : 4096;
    std::string path = make_file(dir, variant.c_str(), size);
    std::size_t total = 0;
    auto t0 = bench::Clock::now();
    rt.block_on(bench::Repeat(n, [&](std::uint64_t) {
      return fs::read(path) | map([&](std::vector<std::byte> bytes) {
               total += bytes.size();
               return Unit{};
             });
    }));
    seconds = bench::secs_since(t0);
    if (total != n * size) bench::die("wrong size");
  } else if (variant == "small_write") {
    std::string path = dir + "/pollux-bench-small-write";
    std::string data(4096, 'w');
    auto t0 = bench::Clock::now();
    rt.block_on(bench::Repeat(n, [&](std::uint64_t) { return fs::write(path, data); }));
    seconds = bench::secs_since(t0);
    if (rt.block_on(fs::read_to_string(path)) != data) bench::die("wrong contents");
  } else if (variant == "write4k") {
    std::string path = dir + "/pollux-bench-write4k";
    std::vector<std::byte> data(4096, std::byte{'w'});
    fs::File file = rt.block_on(fs::File::create(path));
    auto t0 = bench::Clock::now();
    rt.block_on(bench::Repeat(n, [&](std::uint64_t) { return file.write_at(data, 0); }));
    seconds = bench::secs_since(t0);
    if (rt.block_on(fs::read(path)) != data) bench::die("wrong contents");
  } else {
    bench::die("unknown variant '" + variant
               + "' (read64k, read64k_blocking, read16m, small_read, small_write, write4k)");
  }
  bench::emit("fs", variant, n, seconds);
}
