// RwLock<T>: shared reads, exclusive writes, FIFO so that a waiting writer
// is not starved by readers, and cancellation (tokio's sync_rwlock.rs, in
// C++).
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "support.hpp"

using namespace pollux;

using test::Probe;

TEST_CASE("many readers share the lock at once") {
  RwLock<int> lock(5);
  auto a = lock.try_read();
  auto b = lock.try_read();
  REQUIRE(a);
  REQUIRE(b);
  CHECK(*a.value() + *b.value() == 10);
  CHECK(!lock.try_write());
}

TEST_CASE("a writer excludes readers and other writers") {
  RwLock<int> lock(0);
  auto w = lock.try_write();
  REQUIRE(w);
  *w.value() = 3;
  CHECK(!lock.try_read());
  CHECK(!lock.try_write());
  w.value().unlock();
  CHECK(*lock.try_read().value() == 3);
}

TEST_CASE("a waiting writer is not overtaken by readers that come after it") {
  RwLock<int> lock(0);
  auto reader = lock.try_read();
  Probe writer_probe, reader_probe;
  auto write = lock.write();
  CHECK(write.poll(writer_probe.cx).is_pending());
  CHECK(!lock.try_read());  // the writer waits first
  auto late_read = lock.read();
  CHECK(late_read.poll(reader_probe.cx).is_pending());
  reader.value().unlock();
  CHECK(writer_probe.counts.woken() == 1);
  CHECK(reader_probe.counts.woken() == 0);
  {
    auto guard = write.poll(writer_probe.cx);
    REQUIRE(guard.is_ready());
    *guard.value() = 1;
  }
  CHECK(reader_probe.counts.woken() == 1);
  CHECK(*late_read.poll(reader_probe.cx).value() == 1);
}

TEST_CASE("a queued writer destroyed lets the readers behind it in") {
  RwLock<int> lock(0);
  auto reader = lock.try_read();
  Probe w, r;
  std::optional<RwLock<int>::Write> write(lock.write());
  auto read = lock.read();
  CHECK(write->poll(w.cx).is_pending());
  CHECK(read.poll(r.cx).is_pending());
  write.reset();
  CHECK(r.counts.woken() == 1);
  CHECK(read.poll(r.cx).is_ready());
}

TEST_CASE("readers and writers on four threads never see a torn value") {
  RwLock<std::pair<long, long>> lock(std::pair<long, long>(0, 0));
  std::atomic<int> torn{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        if ((i + t) % 4 == 0) {
          auto guard = block_on(lock.write());
          guard->first++;
          guard->second++;
        } else {
          auto guard = block_on(lock.read());
          if (guard->first != guard->second) torn++;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(torn == 0);
  CHECK(lock.try_read().value()->first == 2000);
}
