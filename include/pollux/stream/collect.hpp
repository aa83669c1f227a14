// collect(stream): a future of every item in a container, std::vector by
// default (`collect<std::set<int>>(s)` for another one): any container
// with push_back, or else insert. Pipe form: `s | collect()`.
// Cancellation: destroying it loses the items gathered so far.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>
#include <vector>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The future collect(s) returns.
template <Stream S, class C>
class [[nodiscard("futures do nothing unless polled")]] Collect {
 public:
  using Output = C;

  /// What collect() makes; call that instead.
  explicit Collect(S source) : source_(std::move(source)) {}

  /// Takes every item into the container; Ready with it at the end of the stream.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Collect, !done_);
    for (;;) {
      auto item = source_.poll_next(cx);
      if (item.is_pending()) return pending;
      if (!item.value()) {
        done_ = true;
        return ready(std::move(items_));
      }
      if constexpr (requires { items_.push_back(std::move(*item.value())); }) {
        items_.push_back(std::move(*item.value()));
      } else {
        items_.insert(std::move(*item.value()));
      }
    }
  }

 private:
  S source_;
  C items_{};
  bool done_ = false;
};

}  // namespace stream

/// All the items of `source`, in a C (a std::vector unless named).
template <class C = void, Stream S>
auto collect(S source) {
  using Container = std::conditional_t<std::is_void_v<C>, std::vector<item_t<S>>, C>;
  return stream::Collect<S, Container>(std::move(source));
}

/// `s | collect()` or `s | collect<C>()`.
template <class C = void>
auto collect() {
  return stream_pipe([]<Stream S>(S source) { return collect<C>(std::move(source)); });
}

}  // namespace pollux
