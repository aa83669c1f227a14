// pollux::fs: whole-file helpers, File as a stream and at offsets, the
// path operations, read_dir, and what a destroyed future leaves behind.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <optional>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <pollux/fs.hpp>

#include "death.hpp"
#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;
using fs::File;
using test::Death;
namespace stdfs = std::filesystem;

namespace {

// A directory of its own, removed at the end: in memory (/dev/shm) where
// there is one, so that a sync costs no disk write and the storms stay quick.
struct TempDir {
  stdfs::path path;
  TempDir() {
    stdfs::path base = stdfs::is_directory("/dev/shm") ? stdfs::path("/dev/shm") : stdfs::temp_directory_path();
    std::string pattern = (base / "pollux-fs-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() { stdfs::remove_all(path); }
  stdfs::path operator/(const char* name) const { return path / name; }
};

std::vector<std::byte> random_bytes(std::size_t n, std::mt19937& rng) {
  std::vector<std::byte> out(n);
  for (auto& b : out) b = static_cast<std::byte>(rng());
  return out;
}

}  // namespace

TEST_CASE("fs::write then fs::read_to_string gives the same bytes back") {
  TempDir dir;
  auto rt = Runtime::current_thread();
  rt.block_on(fs::write(dir / "x", std::string(100000, 'x')));
  std::string back = rt.block_on(fs::read_to_string(dir / "x"));
  CHECK(back == std::string(100000, 'x'));
  CHECK(rt.block_on(fs::read(dir / "x")).size() == 100000);
}

TEST_CASE("fs::read_to_string of a missing file throws an error naming the path") {
  TempDir dir;
  auto rt = Runtime::current_thread();
  try {
    (void)rt.block_on(fs::read_to_string(dir / "missing"));
    FAIL("no error");
  } catch (const std::system_error& e) {
    CHECK(e.code() == std::errc::no_such_file_or_directory);
    CHECK(std::string(e.what()).find((dir / "missing").string()) != std::string::npos);
  }
}

TEST_CASE("a file operation polled outside a runtime throws NoRuntime") {
  TempDir dir;
  auto read = fs::read(dir / "x");
  CHECK_THROWS_AS((void)test::poll_once(read), NoRuntime);
}

TEST_CASE("reads and writes at random offsets and sizes match a model of the file") {
  TempDir dir;
  auto rt = Runtime::current_thread();
  std::mt19937 rng(7);
  constexpr std::size_t kSize = 3 * File::kMaxChunk + 12345;  // larger than any one pool transfer
  std::vector<std::byte> model(kSize);
  File file = rt.block_on(fs::OpenOptions().read(true).write(true).create(true).open(dir / "f"));
  rt.block_on(file.set_len(kSize));
  for (int round = 0; round < 200; ++round) {
    std::size_t offset = rng() % kSize;
    std::size_t length = std::min<std::size_t>(rng() % (File::kMaxChunk + 5000) + 1, kSize - offset);
    if (rng() % 2 == 0) {
      std::vector<std::byte> data = random_bytes(length, rng);
      std::size_t done = 0;
      while (done < length) {
        done += rt.block_on(file.write_at(std::span(data).subspan(done), offset + done));
      }
      std::copy(data.begin(), data.end(), model.begin() + static_cast<std::ptrdiff_t>(offset));
    } else {
      std::vector<std::byte> got(length);
      std::size_t done = 0;
      while (done < length) {
        std::size_t n = rt.block_on(file.read_at(std::span(got).subspan(done), offset + done));
        REQUIRE(n > 0);
        done += n;
      }
      REQUIRE(std::equal(got.begin(), got.end(), model.begin() + static_cast<std::ptrdiff_t>(offset)));
    }
  }
  CHECK(rt.block_on(file.metadata()).len == kSize);
  CHECK(rt.block_on(fs::read(dir / "f")) == model);
}

TEST_CASE("a File is a stream: write_all, flush, seek and read_to_end round-trip through it") {
  TempDir dir;
  auto rt = Runtime::current_thread();
  std::mt19937 rng(3);
  std::vector<std::byte> data = random_bytes(5 * File::kMaxChunk + 7, rng);
  File file = rt.block_on(fs::OpenOptions().read(true).write(true).create(true).open(dir / "s"));
  rt.block_on(write_all(file, data));
  rt.block_on(flush(file));
  CHECK(rt.block_on(file.seek(0)) == 0);
  std::vector<std::byte> back;
  rt.block_on(read_to_end(file, back));
  CHECK(back == data);
}

TEST_CASE("a write the pool fails is thrown by the next flush, once") {
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  File full = File::from_fd(::open("/dev/full", O_WRONLY | O_CLOEXEC));  // every write(2): ENOSPC
  std::byte one{1};
  CHECK(rt.block_on(write(full, std::span(&one, 1))) == 1);  // taken; the pool writes it behind the caller
  try {
    rt.block_on(flush(full));
    FAIL("no error");
  } catch (const std::system_error& e) {
    CHECK(e.code() == std::errc::no_space_on_device);
  }
  rt.block_on(flush(full));  // reported once
}

TEST_CASE("a write refused at once is thrown by the write itself") {
  TempDir dir;
  auto rt = Runtime::current_thread();
  rt.block_on(fs::write(dir / "r", std::string("abc")));
  File file = rt.block_on(File::open(dir / "r"));  // read-only: EBADF
  std::byte one{1};
  CHECK_THROWS_AS(rt.block_on(write(file, std::span(&one, 1))), std::system_error);
}

namespace {
// A current-thread runtime on io_uring, or nullopt where the kernel refuses it.
std::optional<Runtime> uring_runtime() {
  RuntimeOptions options;
  options.io_backend = IoBackend::Uring;
  auto rt = Runtime::current_thread(options);
  if (rt.io_backend() != IoBackend::Uring) return std::nullopt;
  return rt;
}
}  // namespace

TEST_CASE("on io_uring a File's opens, writes, syncs, metadata and reads never use the blocking pool") {
  TempDir dir;
  auto rt = uring_runtime();
  if (!rt) {
    MESSAGE("this kernel refuses io_uring");
    return;
  }
  std::mt19937 rng(5);
  std::vector<std::byte> bytes = random_bytes(200000, rng);
  File file =
      rt->block_on(fs::OpenOptions().read(true).write(true).create(true).open(dir / "ring"));  // O_CREAT: openat
  rt->block_on(write_all(file, bytes));
  rt->block_on(file.sync_all());
  rt->block_on(file.sync_data());
  CHECK(rt->block_on(file.metadata()).len == bytes.size());
  std::vector<std::byte> back(bytes.size());
  CHECK(rt->block_on(file.read_at(back, 0)) == bytes.size());
  CHECK(back == bytes);
  CHECK(rt->block_on(file.write_at(std::span(bytes).first(1000), 500)) == 1000);
  CHECK(rt->metrics().blocking.jobs_submitted == 0);
}

TEST_CASE("a File destroyed while the ring writes behind it leaves the kernel its buffer, and the bytes land") {
  TempDir dir;
  int before = test::open_fds();
  std::vector<std::byte> bytes(1 << 20, std::byte{7});
  {
    auto rt = uring_runtime();
    if (!rt) {
      MESSAGE("this kernel refuses io_uring");
      return;
    }
    auto guard = rt->enter();
    File file = rt->block_on(File::create(dir / "behind"));
    CHECK(rt->block_on(write(file, bytes)) == bytes.size());  // taken; the ring writes it
    { File gone = std::move(file); }  // the write is still in the kernel: its buffer must outlive the File
  }                                   // the runtime's ring reaps every completion before it goes
  CHECK(stdfs::file_size(dir / "behind") == bytes.size());
  CHECK(test::open_fds() == before);
}

TEST_CASE("an open destroyed while the ring opens closes the descriptor that comes too late") {
  TempDir dir;
  int before = test::open_fds();
  {
    auto rt = uring_runtime();
    if (!rt) {
      MESSAGE("this kernel refuses io_uring");
      return;
    }
    auto guard = rt->enter();
    for (int i = 0; i < 100; ++i) {
      auto opening = fs::OpenOptions().write(true).create(true).open(dir / "late");  // O_CREAT: never cached
      CHECK(test::poll_once(opening).is_pending());
      rt->block_on(yield_now());  // the open may be done now, or still in the kernel
    }
  }
  CHECK(test::open_fds() == before);
}

TEST_CASE("a write behind the caller cut short by the file size limit is thrown by flush, with what fit written") {
  for (IoBackend backend : {IoBackend::Epoll, IoBackend::Uring}) {
    TempDir dir;
    CAPTURE(backend);
    Death death = test::run_in_child([&] {
      std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit: EFBIG, not a signal
      rlimit limit{5000, 5000};
      if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) std::abort();
      RuntimeOptions options;
      options.io_backend = backend;
      auto rt = Runtime::current_thread(options);
      File file = rt.block_on(File::create(dir / "limited"));
      std::vector<std::byte> bytes(8000, std::byte{1});
      if (rt.block_on(write(file, bytes)) != bytes.size()) std::abort();  // taken whole: written behind
      try {
        rt.block_on(flush(file));
        std::fprintf(stderr, "no error\n");
      } catch (const std::system_error& e) {
        std::fprintf(stderr, "%s\n", e.code() == std::errc::file_too_large ? "EFBIG" : e.what());
      }
    });
    CHECK_FALSE(death.aborted);
    CHECK(death.stderr_text == "EFBIG\n");
    CHECK(stdfs::file_size(dir / "limited") == 5000);  // the first write was short; the rest met the limit
  }
}

TEST_CASE("a read destroyed while the pool waits keeps its bytes for the next read") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  File file = File::from_fd(fds[0]);  // a pipe: RWF_NOWAIT is refused, the pool reads and blocks
  {
    std::array<std::byte, 16> buffer{};
    auto first = read(file, buffer);
    CHECK(test::poll_once(first).is_pending());
  }  // destroyed while a pool thread sits in read(2)
  REQUIRE(::write(fds[1], "abc", 3) == 3);
  std::array<std::byte, 16> buffer{};
  CHECK(rt.block_on(read(file, buffer)) == 3);
  CHECK(std::memcmp(buffer.data(), "abc", 3) == 0);
  ::close(fds[1]);
}

TEST_CASE("opening a FIFO with no writer waits off the caller's thread, on the ring or the pool") {
  TempDir dir;
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  auto opening = File::open(dir / "fifo");
  CHECK(test::poll_once(opening).is_pending());  // a blocking open here would hang the test
  // The writer's open returns once the reader's is in the kernel: on the
  // ring, only after the runtime's thread submits it.
  int writer = -1;
  std::thread opens_writer([&] { writer = ::open((dir / "fifo").c_str(), O_WRONLY | O_CLOEXEC); });
  File reader = rt.block_on(std::move(opening));
  opens_writer.join();
  REQUIRE(::write(writer, "x", 1) == 1);
  std::array<std::byte, 4> buffer{};
  CHECK(rt.block_on(read(reader, buffer)) == 1);
  ::close(writer);
  { File gone = std::move(reader); }    // no reader left: the next writer's open waits for the pool's
  auto whole = fs::read(dir / "fifo");  // fs::read of a FIFO: the pool too
  CHECK(test::poll_once(whole).is_pending());
  int late_writer = ::open((dir / "fifo").c_str(), O_WRONLY | O_CLOEXEC);  // returns once the pool opened it
  ::close(late_writer);
  CHECK(rt.block_on(std::move(whole)).empty());
}

TEST_CASE("OpenOptions that mean nothing throw at the call") {
  CHECK_THROWS_AS((void)fs::OpenOptions().open("x"), std::invalid_argument);
  CHECK_THROWS_AS((void)fs::OpenOptions().read(true).create(true).open("x"), std::invalid_argument);
  CHECK_THROWS_AS((void)fs::OpenOptions().append(true).truncate(true).open("x"), std::invalid_argument);
}

TEST_CASE("create_new fails on a file that exists") {
  TempDir dir;
  auto rt = Runtime::current_thread();
  rt.block_on(fs::write(dir / "e", std::string("1")));
  CHECK_THROWS_AS(rt.block_on(fs::OpenOptions().write(true).create_new(true).open(dir / "e")), std::system_error);
}

TEST_CASE("the path operations make, rename, copy, describe and remove") {
  TempDir dir;
  auto rt = Runtime::current_thread();
  rt.block_on(fs::create_dir_all(dir.path / "a" / "b" / "c"));
  rt.block_on(fs::create_dir_all(dir.path / "a" / "b" / "c"));  // already there: fine
  CHECK(rt.block_on(fs::metadata(dir.path / "a" / "b")).is_dir());
  rt.block_on(fs::write(dir.path / "a" / "f", std::string(70000, 'q')));
  CHECK(rt.block_on(fs::copy(dir.path / "a" / "f", dir.path / "a" / "g")) == 70000);
  rt.block_on(fs::rename(dir.path / "a" / "g", dir.path / "a" / "b" / "h"));
  CHECK(rt.block_on(fs::read_to_string(dir.path / "a" / "b" / "h")) == std::string(70000, 'q'));
  CHECK_FALSE(rt.block_on(fs::try_exists(dir.path / "a" / "g")));
  rt.block_on(fs::remove_file(dir.path / "a" / "f"));
  CHECK_THROWS_AS(rt.block_on(fs::remove_file(dir.path / "a" / "f")), std::system_error);
  CHECK_THROWS_AS(rt.block_on(fs::remove_dir(dir.path / "a")), std::system_error);  // not empty
  rt.block_on(fs::remove_dir_all(dir.path / "a"));
  CHECK_FALSE(rt.block_on(fs::try_exists(dir.path / "a")));
}

TEST_CASE("read_dir gives every entry once, over more than one batch") {
  TempDir dir;
  auto rt = Runtime::current_thread();
  for (int i = 0; i < 600; ++i) {
    ::close(::open((dir.path / ("e" + std::to_string(i))).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
  }
  ::mkdir((dir.path / "sub").c_str(), 0755);
  std::set<std::string> seen;
  auto entries = fs::read_dir(dir.path);
  while (auto entry = rt.block_on(next(entries))) {
    CHECK(seen.insert(entry->file_name().string()).second);
    CHECK(entry->path().parent_path() == dir.path);
    if (entry->file_name() == "sub") CHECK(entry->file_type() == fs::FileType::Directory);
  }
  CHECK(seen.size() == 601);
}

TEST_CASE("read_dir of a missing directory is an error naming it") {
  TempDir dir;
  auto rt = Runtime::current_thread();
  auto entries = fs::read_dir(dir / "none");
  CHECK_THROWS_AS((void)rt.block_on(next(entries)), std::system_error);
}

TEST_CASE("with no descriptor left an open is a clear error, and nothing leaks") {
  TempDir dir;
  auto rt = Runtime::current_thread();
  rt.block_on(fs::write(dir / "x", std::string("x")));
  (void)rt.block_on(fs::read(dir / "x"));  // the pool's thread exists before the fds run out
  int before = test::open_fds();
  {
    test::HoldEveryFd hold;
    try {
      (void)rt.block_on(fs::read(dir / "x"));
      FAIL("no error");
    } catch (const std::system_error& e) {
      CHECK(e.code() == std::errc::too_many_files_open);
      CHECK(std::string(e.what()).find("read") != std::string::npos);
    }
    CHECK_THROWS_AS(rt.block_on(File::open(dir / "x")), std::system_error);
  }
  CHECK(test::open_fds() == before);
}

TEST_CASE("100,000 file operations destroyed at random points leak no descriptor") {
  TempDir dir;
  std::mt19937 rng(11);
  int before = test::open_fds();
  {
    auto rt = Runtime::current_thread();
    rt.block_on(fs::write(dir / "c", std::string(1 << 16, 'c')));
    auto guard = rt.enter();
    File shared = rt.block_on(fs::OpenOptions().read(true).write(true).open(dir / "c"));
    std::vector<std::byte> buffer(70000);
    constexpr int kOps = 100000;
    for (int i = 0; i < kOps; ++i) {
      int polls = static_cast<int>(rng() % 3);  // 0: never polled, 1: polled once, 2: run through
      auto drive = [&](auto&& future) {
        if (polls == 1) (void)test::poll_once(future);
        if (polls == 2) (void)rt.block_on(std::move(future));
      };
      switch (rng() % 5) {
        case 0:
          drive(File::open(dir / "c"));
          break;
        case 1:
          drive(shared.read_at(buffer, rng() % (1 << 16)));
          break;
        case 2:
          drive(shared.write_at(std::span(buffer).first(rng() % 5000 + 1), rng() % (1 << 16)));
          break;
        case 3:
          drive(fs::read(dir / "c"));
          break;
        default:
          drive(shared.sync_data());
          break;
      }
    }
    rt.block_on(flush(shared));
  }  // the runtime's pool finishes every job left before it goes
  CHECK(test::open_fds() == before);
}
