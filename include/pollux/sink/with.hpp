// sink | with(fn): a sink of whatever fn takes, which places fn(item) in
// the sink below, as futures-rs's SinkExt::with (fn here is a plain
// function, run at start_send). Every other step goes straight through.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <functional>
#include <type_traits>
#include <utility>

#include "pollux/core/pipe.hpp"
#include "pollux/sink/sink.hpp"

namespace pollux {

/// What with() makes: a sink that maps each item with fn, then places it
/// in the sink it owns.
template <BasicSink S, class Fn>
class [[nodiscard("sinks do nothing unless sent to")]] With {
 public:
  /// The sink below's error.
  using Error = sink_error_t<S>;

  /// What with() makes; call that instead.
  With(S sink, Fn fn) : sink_(std::move(sink)), fn_(std::move(fn)) {}

  /// The sink below's poll_ready.
  Poll<Result<void, Error>> poll_ready(Context & cx) { return sink_.poll_ready(cx); }
  /// Places fn(item) in the sink below.
  template <class U>
  requires std::invocable<Fn&, U&&> && Sink<S, std::invoke_result_t<Fn&, U&&>> Result<void, Error> start_send(U
                                                                                                              && item) {
    return sink_.start_send(std::invoke(fn_, std::forward<U>(item)));
  }
  /// The sink below's poll_flush.
  Poll<Result<void, Error>> poll_flush(Context & cx) { return sink_.poll_flush(cx); }
  /// The sink below's poll_close.
  Poll<Result<void, Error>> poll_close(Context & cx) { return sink_.poll_close(cx); }

  /// The sink below.
  S& get_ref() noexcept { return sink_; }

 private:
  S sink_;
  Fn fn_;
};

/// A sink that places fn(item) in `sink`.
template <BasicSink S, class Fn>
With<S, Fn> with(S sink, Fn fn) {
  return With<S, Fn>(std::move(sink), std::move(fn));
}

/// The right-hand side of `sink | with(fn)`.
template <class Fn>
struct WithAdaptor : PipeAdaptor {
  /// The function with(fn) was given.
  Fn fn;
};

/// The pipe form: `sink | with(fn)`.
template <class Fn>
requires(!BasicSink<Fn>) WithAdaptor<Fn> with(Fn fn) { return {{}, std::move(fn)}; }

/// `sink | with(fn)` is with(sink, fn).
template <BasicSink S, class Fn>
With<S, Fn> pipe_into(S sink, WithAdaptor<Fn> adaptor) {
  return With<S, Fn>(std::move(sink), std::move(adaptor.fn));
}

}  // namespace pollux
