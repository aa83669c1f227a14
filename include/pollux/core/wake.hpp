// Wakers from a reference-counted object of the user's, like Rust's `Wake`
// trait on an `Arc`: derive from RefCounted<W>, give W a thread-safe
// `void wake()`, and `waker_from(arc)` builds a Waker whose clone and drop
// are reference-count operations (rule 6: wake may come from any thread, and
// the object lives as long as the last waker does).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <boost/smart_ptr/intrusive_ptr.hpp>
#include <boost/smart_ptr/intrusive_ref_counter.hpp>

#include <concepts>
#include <utility>

#include "pollux/core/waker.hpp"

namespace pollux {

/// Shared ownership through a count inside the object (one allocation, and a
/// Waker can hold the object with nothing but its address).
template <class T>
using Arc = boost::intrusive_ptr<T>;

/// Base class that gives T an atomic reference count for Arc<T>.
template <class T>
using RefCounted = boost::intrusive_ref_counter<T, boost::thread_safe_counter>;

/// Makes a T (derived from RefCounted) on the heap and holds it in an Arc.
template <class T, class... Args>
Arc<T> make_arc(Args&&... args) {
  return Arc<T>(new T(std::forward<Args>(args)...));
}

/// A type whose objects can stand behind a Waker. `wake()` is called from any
/// thread, possibly concurrently, so it must be thread-safe.
template <class W>
concept Wake = requires(W& w) {
  { w.wake() } -> std::same_as<void>;
  intrusive_ptr_add_ref(&w);
  intrusive_ptr_release(&w);
};

namespace detail {
template <Wake W>
struct ArcWakerVTable {
  static W* self(const void* data) noexcept { return static_cast<W*>(const_cast<void*>(data)); }
  static RawWaker clone(const void* data) noexcept {
    intrusive_ptr_add_ref(self(data));
    return RawWaker{data, &table};
  }
  static void wake(const void* data) noexcept {
    self(data)->wake();
    intrusive_ptr_release(self(data));
  }
  static void wake_by_ref(const void* data) noexcept { self(data)->wake(); }
  static void drop(const void* data) noexcept { intrusive_ptr_release(self(data)); }
  static constexpr RawWakerVTable table{&clone, &wake, &wake_by_ref, &drop};
};
}  // namespace detail

/// The Waker takes over `object`'s reference.
template <Wake W>
Waker waker_from(Arc<W> object) noexcept {
  return Waker::from_raw(RawWaker{object.detach(), &detail::ArcWakerVTable<W>::table});
}

}  // namespace pollux
