// BoxFuture<T>: an owning, type-erased future of T, for when one type must
// stand for many (a vector of different futures, recursion, an API
// boundary). The boxed future lives on the heap, so the BoxFuture itself may
// be moved at any time, even after a poll: rule 4 holds for the box's
// contents, which never move.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <memory>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"

namespace pollux {

/// An owning, type-erased future of T, for when one type must stand for many (a vector of different
/// futures, recursion, an API boundary).
template <class T>
class [[nodiscard("futures do nothing unless polled")]] BoxFuture {
 public:
  using Output = T;

  /// Moves `future` to the heap (one allocation) behind a virtual poll.
  template <Future F>
  requires(
      !std::is_same_v<
          std::decay_t<F>,
          BoxFuture> && (std::is_same_v<output_t<F>, T> || std::is_constructible_v<T, output_t<F>>)) explicit BoxFuture(F future)
      : future_(std::make_unique<Holder<F>>(std::move(future))) {}

  /// Moves the pointer; the boxed future stays where it is.
  BoxFuture(BoxFuture &&) noexcept = default;
  /// Destroys the boxed future (cancelling it), then takes over `other`'s.
  BoxFuture& operator=(BoxFuture&&) noexcept = default;

  /// Polls the boxed future through its vtable.
  Poll<T> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(BoxFuture, future_ != nullptr);
    return future_->poll(cx);
  }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual Poll<T> poll(Context& cx) = 0;
  };
  template <class F>
  struct Holder final : Base {
    explicit Holder(F&& f) : future(std::move(f)) {}
    Poll<T> poll(Context& cx) override { return future.poll(cx); }
    F future;
  };

  std::unique_ptr<Base> future_;
};

/// Moves `future` into a BoxFuture of its output type.
template <Future F>
BoxFuture<output_t<F>> boxed(F future) {
  return BoxFuture<output_t<F>>(std::move(future));
}

}  // namespace pollux
