// Clang's thread-safety attributes, and a mutex that carries them: with
// -Wthread-safety, Clang checks at compile time that every field marked
// POLLUX_GUARDED_BY(m) is touched only with `m` held. Other compilers see
// plain declarations. (libstdc++'s std::mutex has no such attributes, hence
// the wrapper.)
#pragma once

#include <mutex>

#if defined(__clang__)
#define POLLUX_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define POLLUX_THREAD_ANNOTATION(x)
#endif

#define POLLUX_CAPABILITY(name) POLLUX_THREAD_ANNOTATION(capability(name))
#define POLLUX_SCOPED_CAPABILITY POLLUX_THREAD_ANNOTATION(scoped_lockable)
#define POLLUX_GUARDED_BY(m) POLLUX_THREAD_ANNOTATION(guarded_by(m))
#define POLLUX_REQUIRES(...) POLLUX_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define POLLUX_ACQUIRE(...) POLLUX_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define POLLUX_RELEASE(...) POLLUX_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define POLLUX_EXCLUDES(...) POLLUX_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

namespace pollux::detail {

/// std::mutex, annotated as a capability for Clang's analysis.
class POLLUX_CAPABILITY("mutex") Mutex {
 public:
  void lock() POLLUX_ACQUIRE() { mutex_.lock(); }
  void unlock() POLLUX_RELEASE() { mutex_.unlock(); }

 private:
  std::mutex mutex_;
};

/// Holds a Mutex for the enclosing scope.
class POLLUX_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) POLLUX_ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
  ~MutexLock() POLLUX_RELEASE() { mutex_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mutex_;
};

}  // namespace pollux::detail
