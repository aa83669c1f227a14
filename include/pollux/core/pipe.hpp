// The pipe form of every combinator: `source | map(fn) | then(g)`. Each
// adaptor (what map(fn) returns when given only its function) derives from
// PipeAdaptor, and each layer says what it takes with a pipe_into(source,
// adaptor) overload next to the combinator (a future's map in future/, a
// stream's in stream/), so one operator| serves them all and a mismatch
// is one static_assert, not a list of every operator| that did not fit.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <type_traits>
#include <utility>

#include "pollux/core/detail/diagnose.hpp"

namespace pollux {

/// The base of every adaptor that goes on the right of `|`.
struct PipeAdaptor {};

/// A type that goes on the right of `|`.
template <class A>
concept Adaptor = std::derived_from<std::remove_cvref_t<A>, PipeAdaptor>;

/// `source | adaptor` is pipe_into(source, adaptor), whichever layer defines it.
template <class S, Adaptor A>
auto operator|(S source, A adaptor) {
  if constexpr (std::is_same_v<S, detail::Misused>) {
    return source;  // the mistake on its left was reported already
  } else if constexpr (requires { pipe_into(std::move(source), std::move(adaptor)); }) {
    return pipe_into(std::move(source), std::move(adaptor));
  } else {
    static_assert(detail::kFalse<S>,
                  "pollux: `x | adaptor`: this adaptor does not take x (futures take map, then, fuse, "
                  "catch_exception; streams take map, then, fuse and the stream adapters; sinks take with)");
    return detail::Misused{};
  }
}

}  // namespace pollux
