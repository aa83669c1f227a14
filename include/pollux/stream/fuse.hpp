// fuse(stream): a stream that may be polled again after it ended: it then
// answers the end again, without polling the source. is_terminated() tells
// whether it ended, so a loop over several streams can skip finished ones.
// Pipe form: `s | fuse()`. Cancellation: nothing is buffered.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <utility>

#include "pollux/future/fuse.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {
namespace stream {

/// The stream fuse(s) returns.
template <Stream S>
class [[nodiscard("streams do nothing unless polled")]] Fuse {
 public:
  using Item = item_t<S>;

  /// What fuse() makes; call that instead.
  explicit Fuse(S source) : source_(std::in_place, std::move(source)) {}

  /// The source's next item; after its end, the end again, without polling it.
  Poll<std::optional<Item>> poll_next(Context & cx) {
    if (!source_) return stream_end;
    auto item = source_->poll_next(cx);
    if (item.is_ready() && !item.value()) source_.reset();
    return item;
  }

  /// True once the source ended (it has been released).
  bool is_terminated() const noexcept { return !source_; }

 private:
  std::optional<S> source_;
};

}  // namespace stream

/// `source`, safe to poll after its end.
template <Stream S>
stream::Fuse<S> fuse(S source) {
  return stream::Fuse<S>(std::move(source));
}

/// `s | fuse()`.
template <Stream S>
stream::Fuse<S> pipe_into(S source, FuseAdaptor) {
  return stream::Fuse<S>(std::move(source));
}

}  // namespace pollux
