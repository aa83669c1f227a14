// Either<A, B> and OneOf<Ts...>: one of several futures (or streams) of
// the same output, as futures-rs's Either: what a function returns when its
// branches build different futures, with no BoxFuture and no allocation.
// It polls whichever alternative it holds; destroying it destroys that one.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "pollux/core/future.hpp"
#include "pollux/stream/stream.hpp"

namespace pollux {

namespace detail {
template <bool AllFutures, class... Ts>
struct OneOfOutput {};
template <class... Ts>
struct OneOfOutput<true, Ts...> {
  /// The output all alternatives share (their common type).
  using Output = std::common_type_t<output_t<Ts>...>;
};
template <bool AllStreams, class... Ts>
struct OneOfItem {};
template <class... Ts>
struct OneOfItem<true, Ts...> {
  /// The item all alternatives share (their common type).
  using Item = std::common_type_t<item_t<Ts>...>;
};
}  // namespace detail

/// One of the futures or streams `Ts`, chosen when it is made. A Future
/// when every alternative is one, a Stream when every alternative is one.
template <class... Ts>
class [[nodiscard("futures do nothing unless polled")]] OneOf : public detail::OneOfOutput<(Future<Ts> && ...), Ts...>,
                                                                public detail::OneOfItem<(Stream<Ts> && ...), Ts...> {
  static_assert(sizeof...(Ts) >= 2, "pollux::OneOf needs two alternatives or more");

 public:
  /// Holds `alternative`, one of Ts.
  template <class T>
  requires(std::is_same_v<std::remove_cvref_t<T>, Ts> || ...)
      OneOf(T && alternative)  // NOLINT: implicit by design, so each branch can `return its_future;`
      : v_(std::in_place_type<std::remove_cvref_t<T>>, std::forward<T>(alternative)) {}

  /// Which alternative it holds (its index in Ts).
  std::size_t index() const noexcept { return v_.index(); }

  /// Future: polls the alternative it holds.
  template <class Self = OneOf>
  requires(Future<Ts> && ...) Poll<typename Self::Output> poll(Context & cx) {
    return std::visit(
        [&](auto& future) -> Poll<typename Self::Output> {
          using Out = typename Self::Output;
          if constexpr (std::is_void_v<Out>) {
            return future.poll(cx);
          } else {
            auto result = future.poll(cx);
            if (result.is_pending()) return pending;
            return Poll<Out>(std::in_place, std::move(result).value());
          }
        },
        v_);
  }

  /// Stream: polls the alternative it holds for its next item.
  template <class Self = OneOf>
  requires(Stream<Ts> && ...) Poll<std::optional<typename Self::Item>> poll_next(Context & cx) {
    return std::visit(
        [&](auto& stream) -> Poll<std::optional<typename Self::Item>> {
          auto item = stream.poll_next(cx);
          if (item.is_pending()) return pending;
          if (!item.value()) return stream_end;
          return Poll<std::optional<typename Self::Item>>(std::in_place, std::move(*item.value()));
        },
        v_);
  }

 private:
  std::variant<Ts...> v_;
};

/// One of two futures or streams: `Either<A, B>`.
template <class A, class B>
using Either = OneOf<A, B>;

}  // namespace pollux
