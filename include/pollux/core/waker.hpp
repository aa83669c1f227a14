// Waker: the handle a future stores when it returns Pending, so that whoever
// makes progress possible can ask for it to be polled again (contract rule 2).
// It is a data pointer plus a table of four functions, as in Rust's
// std::task: an executor decides what "wake" means; futures never know.
//
// Rule 6 applies to every vtable: clone, wake, wake_by_ref and drop may be
// called from any thread, any number of times, also after the task that the
// waker names has finished. None of them may throw: wakes run in
// destructors, on foreign threads and inside other libraries' callbacks,
// where an exception has nowhere sensible to go, so Waker's operations are
// noexcept and a vtable function that throws ends the process
// (std::terminate).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <memory>
#include <utility>

namespace pollux {

struct RawWakerVTable;

/// A waker without ownership semantics: `data` means whatever `vtable` says.
struct RawWaker {
  const void* data;              ///< Passed to each of the vtable's functions.
  const RawWakerVTable* vtable;  ///< What waking, cloning and dropping do.
};

/// What a waker does, as four functions of its data pointer. Each may be
/// called from any thread at any time (rule 6) and must not throw: Waker
/// calls them from noexcept functions, so an exception ends the process.
struct RawWakerVTable {
  /// Returns a new RawWaker that wakes the same task (usually: add a reference).
  RawWaker (*clone)(const void* data);
  /// Wakes the task and releases this waker's reference.
  void (*wake)(const void* data);
  /// Wakes the task and keeps this waker's reference.
  void (*wake_by_ref)(const void* data);
  /// Releases this waker's reference without waking.
  void (*drop)(const void* data);
};

namespace detail {
inline constexpr RawWakerVTable noop_vtable{
    [](const void* data) {
      return RawWaker{data, &noop_vtable};
    },
    [](const void*) {},
    [](const void*) {},
    [](const void*) {},
};
inline constexpr RawWaker noop_raw{nullptr, &noop_vtable};
}  // namespace detail

/// Owns one RawWaker: copying clones it, destroying drops it, moving leaves
/// the no-op waker behind. A default-constructed Waker is the no-op waker,
/// which makes "no waker stored yet" an ordinary value rather than a state.
class Waker {
 public:
  /// The no-op waker.
  constexpr Waker() noexcept : raw_(detail::noop_raw) {}

  /// Takes over `raw` (its reference is released when this Waker is
  /// destroyed). The vtable's functions must keep rule 6.
  static Waker from_raw(RawWaker raw) noexcept { return Waker(raw); }

  /// Clones `other` (the vtable's clone).
  Waker(const Waker& other) noexcept : raw_(other.raw_.vtable->clone(other.raw_.data)) {}
  /// Takes over `other`'s reference; `other` becomes the no-op waker.
  Waker(Waker&& other) noexcept : raw_(std::exchange(other.raw_, detail::noop_raw)) {}

  /// Clones `other` in place of this one, unless both wake the same task
  /// (then nothing changes: no clone, no drop).
  Waker& operator=(const Waker& other) noexcept {
    if (this != &other && !will_wake(other)) *this = Waker(other);
    return *this;
  }
  /// Drops this waker and takes over `other`'s reference.
  Waker& operator=(Waker&& other) noexcept {
    if (this != &other) {
      RawWaker old = std::exchange(raw_, std::exchange(other.raw_, detail::noop_raw));
      old.vtable->drop(old.data);
    }
    return *this;
  }

  /// Drops this waker's reference (the vtable's drop).
  ~Waker() { raw_.vtable->drop(raw_.data); }

  /// Wakes the task, consuming this waker: it is the no-op waker afterwards.
  void wake() && noexcept {
    RawWaker raw = std::exchange(raw_, detail::noop_raw);
    raw.vtable->wake(raw.data);
  }

  /// Wakes the task and keeps this waker.
  void wake_by_ref() const noexcept { raw_.vtable->wake_by_ref(raw_.data); }

  /// True when both wake the same task, so a stored waker need not be
  /// replaced by the one of a newer poll (tokio's "Async in depth", "A few loose ends").
  /// Like Rust's, it compares data and vtable: false may be a false negative.
  bool will_wake(const Waker& other) const noexcept {
    return raw_.data == other.raw_.data && raw_.vtable == other.raw_.vtable;
  }

  /// The RawWaker inside, still owned by this Waker.
  const RawWaker& as_raw() const noexcept { return raw_; }

 private:
  explicit Waker(RawWaker raw) noexcept : raw_(raw) {}
  RawWaker raw_;
};

/// A waker that does nothing when woken: for polling a future by hand, in a
/// test, or where no one needs to hear of progress.
inline const Waker& noop_waker() noexcept {
  static const Waker waker;
  return waker;
}

/// Lends a RawWaker as a `const Waker&` without taking a reference or
/// dropping one (Rust's WakerRef): polling a child through its own waker
/// costs nothing unless the child clones it.
class WakerRef {
 public:
  /// Lends `raw`: no clone now, no drop later.
  explicit WakerRef(RawWaker raw) noexcept { std::construct_at(&storage_.waker, Waker::from_raw(raw)); }
  WakerRef(const WakerRef&) = delete;
  WakerRef& operator=(const WakerRef&) = delete;
  ~WakerRef() = default;  // deliberately never runs ~Waker: the reference was never ours

  /// The lent waker, to pass where a `const Waker&` is wanted.
  operator const Waker&() const noexcept { return storage_.waker; }  // NOLINT: implicit by design
  /// The lent waker.
  const Waker& get() const noexcept { return storage_.waker; }

 private:
  union Storage {
    Storage() noexcept {}
    ~Storage() {}
    Waker waker;
  } storage_;
};

}  // namespace pollux
