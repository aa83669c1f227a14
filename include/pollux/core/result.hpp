// Result<T, E>: how an operation that can fail answers: its value, or an
// error whose type names the reason (Elapsed, Closed, TryLockError,
// SendError, FrameError, WouldBlock...). The rule, everywhere in pollux:
// - nullopt only ever means that a stream ended (mpsc's recv() is the next
//   item of the channel's stream; it ends once every sender is gone);
// - every other failure is a Result, never an empty optional;
// - a socket's own I/O errors are thrown as std::system_error (each
//   function says which); through a codec they become the FrameError item
//   that ends the connection's stream;
// - an exception is a bug, not a failure: it propagates to whoever polled,
//   and a spawned task's is rethrown to whoever awaits its JoinHandle,
//   whose own failure, a task cancelled before it finished, is
//   Result<T, Cancelled>.
// Nothing here throws except value() and error() on the wrong
// alternative, which is a bug in the caller; the message of value() on an
// error names the error ("...: deadline has elapsed"). Where exceptions
// are off (the embedded profile), they call the panic handler instead,
// with the same message.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <concepts>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "pollux/core/panic.hpp"

namespace pollux {

namespace detail {
// value() on an error is a bug in the caller, so a logic_error; its message
// says which error it was when the error can say (Elapsed, Cancelled).
// An error that is itself an exception type is thrown as it is.
[[noreturn, gnu::cold]] inline void throw_result_on_value() {
  raise<std::logic_error>("pollux::Result::error() on a value");
}

// Without exceptions (the embedded profile) the panic handler hears the
// fixed part of the message: composing the rest would need the heap.
template <class E>
[[noreturn, gnu::cold, gnu::noinline]] void throw_result_error([[maybe_unused]] const E& error) {
#if defined(__cpp_exceptions)
  if constexpr (std::is_base_of_v<std::exception, E>) {
    throw error;
  } else if constexpr (requires { std::string(error.what()); }) {
    throw std::logic_error("pollux::Result::value() on an error: " + std::string(error.what()));
  } else {
    throw std::logic_error("pollux::Result::value() on an error");
  }
#else
  ::pollux::panic("pollux::Result::value() on an error");
#endif
}
}  // namespace detail

template <class T, class E>
class Result;

namespace detail {
template <class T>
inline constexpr bool is_result_v = false;
template <class T, class E>
inline constexpr bool is_result_v<Result<T, E>> = true;
}  // namespace detail

/// Either a value of T (success) or an error of E. `Result<void, E>` holds
/// no value. Test it with `if (result)` or has_value(), then read value() or
/// error().
template <class T, class E>
class [[nodiscard]] Result {
 public:
  /// Success.
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  /// Failure.
  Result(E error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit by design
  /// Success from anything T is made of and E is not (`return line;` in a
  /// function of Result<std::optional<std::string>, E>).
  template <class U>
  requires(!std::is_same_v<std::remove_cvref_t<U>,
                           Result> && std::is_constructible_v<T, U&&> && !std::is_constructible_v<E, U&&>)
      Result(U&& value)
      : v_(std::in_place_index<0>, std::forward<U>(value)) {}  // NOLINT: implicit by design
  /// Failure from anything E is made of and T is not.
  template <class U>
  requires(!std::is_same_v<std::remove_cvref_t<U>,
                           Result> && std::is_constructible_v<E, U&&> && !std::is_constructible_v<T, U&&>)
      Result(U&& error)
      : v_(std::in_place_index<1>, std::forward<U>(error)) {}  // NOLINT: implicit by design

  /// True on success.
  bool has_value() const noexcept { return v_.index() == 0; }
  /// The same as has_value().
  explicit operator bool() const noexcept { return has_value(); }

  /// The value. On an error it throws std::logic_error naming the error
  /// (its what(), when E has one), or the error itself when E is an
  /// exception; where exceptions are off, it panics with that message.
  T& value() & { return *std::get_if<0>(&checked(true)); }
  /// The value; on an error it throws as the non-const value() does.
  const T& value() const& { return *std::get_if<0>(&const_cast<Result*>(this)->checked(true)); }
  /// Moves the value out; on an error it throws as value() does.
  T&& value() && { return std::move(*std::get_if<0>(&checked(true))); }
  /// The error; throws std::logic_error when this holds a value.
  E& error() & { return *std::get_if<1>(&checked(false)); }
  /// Moves the error out; throws std::logic_error when this holds a value.
  E&& error() && { return std::move(*std::get_if<1>(&checked(false))); }
  /// The value, or `fallback` when this holds an error.
  template <class U>
  T value_or(U&& fallback) const& {
    return has_value() ? std::get<0>(v_) : static_cast<T>(std::forward<U>(fallback));
  }
  /// Moves the value out, or gives `fallback` when this holds an error.
  template <class U>
  T value_or(U&& fallback) && {
    return has_value() ? std::get<0>(std::move(v_)) : static_cast<T>(std::forward<U>(fallback));
  }
  /// The error; throws std::logic_error when this holds a value.
  const E& error() const& { return *std::get_if<1>(&const_cast<Result*>(this)->checked(false)); }

  /// `f(value)`, itself a Result with this error type, when this holds a
  /// value; else this error. Chains steps that can each fail.
  template <class F>
  requires std::is_invocable_v<F, T&&>
  auto and_then(F&& f) && -> std::invoke_result_t<F, T&&> {
    using Next = std::invoke_result_t<F, T&&>;
    static_assert(detail::is_result_v<Next>, "pollux::Result::and_then: the function must return a pollux::Result");
    static_assert(std::is_same_v<typename Next::error_type, E>,
                  "pollux::Result::and_then: the function's Result must have the same error type (map_error first)");
    if (!has_value()) return Next(std::get<1>(std::move(v_)));
    return std::invoke(std::forward<F>(f), std::get<0>(std::move(v_)));
  }
  /// A Result of `f(value)` when this holds a value; else this error.
  template <class F>
  requires std::is_invocable_v<F, T&&> &&(!std::is_void_v<std::invoke_result_t<F, T&&>>)
      Result<std::invoke_result_t<F, T&&>, E> map(F&& f) && {
    if (!has_value()) return std::get<1>(std::move(v_));
    return std::invoke(std::forward<F>(f), std::get<0>(std::move(v_)));
  }
  /// This value, or `f(error)` as the error: to bring the errors of nested
  /// steps to one type before flatten() or and_then().
  template <class F>
  requires std::is_invocable_v<F, E&&> Result<T, std::invoke_result_t<F, E&&>> map_error(F&& f) && {
    using Error = std::invoke_result_t<F, E&&>;
    if (has_value()) return Result<T, Error>(std::get<0>(std::move(v_)));
    return Result<T, Error>(std::invoke(std::forward<F>(f), std::get<1>(std::move(v_))));
  }
  /// For a Result of a Result (a fallible future under a timeout, say):
  /// the inner Result, with the outer error converted to the inner error
  /// type, so `line.value().value()` becomes one test. The outer error must
  /// convert to the inner one (map_error first if it does not).
  auto flatten() && requires detail::is_result_v<T> {
    using Inner = T;
    using InnerError = typename Inner::error_type;
    static_assert(std::is_constructible_v<InnerError, E&&>,
                  "pollux::Result::flatten: the outer error must convert to the inner error type (map_error first)");
    if (!has_value()) return Inner(InnerError(std::get<1>(std::move(v_))));
    return std::get<0>(std::move(v_));
  }

  /// The type of the value.
  using value_type = T;
  /// The type of the error.
  using error_type = E;

  /// Equal when both hold equal values, or both equal errors.
  template <class T2, class E2>
  requires std::equality_comparable_with<T, T2> && std::equality_comparable_with<E, E2>
  friend bool operator==(const Result& a, const Result<T2, E2>& b) {
    if (a.has_value() != b.has_value()) return false;
    return a.has_value() ? a.value() == b.value() : a.error() == b.error();
  }
  /// True when it holds a value equal to `value` (as std::expected).
  friend bool operator==(const Result& result,
                         const T& value) requires(std::equality_comparable<T> && !std::is_same_v<T, E>) {
    return result.has_value() && std::get<0>(result.v_) == value;
  }
  /// True when it holds an error equal to `error`.
  friend bool operator==(const Result& result,
                         const E& error) requires(std::equality_comparable<E> && !std::is_same_v<T, E>) {
    return !result.has_value() && std::get<1>(result.v_) == error;
  }

 private:
  // The index is checked once, here (the accessors use get_if, which
  // checks nothing more), and the throwing paths stay out of line.
  std::variant<T, E>& checked(bool want_value) {
    if (has_value() != want_value) [[unlikely]] {
      if (want_value) detail::throw_result_error(*std::get_if<1>(&v_));
      detail::throw_result_on_value();
    }
    return v_;
  }

  std::variant<T, E> v_;
};

/// A Result of an operation that has nothing to give back on success.
template <class E>
class [[nodiscard]] Result<void, E> {
 public:
  /// No value.
  using value_type = void;
  /// The type of the error.
  using error_type = E;

  /// Success.
  Result() noexcept = default;
  /// Failure.
  Result(E error) : error_(std::move(error)) {}  // NOLINT: implicit by design
  /// Failure from anything E is made of.
  template <class U>
  requires(!std::is_same_v<std::remove_cvref_t<U>, Result> && std::is_constructible_v<E, U&&>) Result(U&& error)
      : error_(std::in_place, std::forward<U>(error)) {}  // NOLINT: implicit by design

  /// True on success.
  bool has_value() const noexcept { return !error_.has_value(); }
  /// The same as has_value().
  explicit operator bool() const noexcept { return has_value(); }
  /// Does nothing on success. On an error it throws as Result<T, E>::value()
  /// does: std::logic_error naming the error, or the error itself.
  void value() const {
    if (error_) detail::throw_result_error(*error_);
  }
  /// The error; throws std::logic_error on success.
  E& error() {
    if (!error_) detail::throw_result_on_value();
    return *error_;
  }
  /// The error; throws std::logic_error on success.
  const E& error() const {
    if (!error_) detail::throw_result_on_value();
    return *error_;
  }

  /// Equal when both succeeded, or both hold equal errors.
  friend bool operator==(const Result& a, const Result& b) requires std::equality_comparable<E> {
    return a.error_ == b.error_;
  }
  /// True when it holds an error equal to `error`.
  friend bool operator==(const Result& result, const E& error) requires std::equality_comparable<E> {
    return result.error_ == error;
  }

 private:
  std::optional<E> error_;
};

/// The other side is gone (a channel's receiver, a watch's sender), or the
/// primitive was closed (a Semaphore after close()).
struct Closed {
  /// A message for logs: "closed".
  static constexpr const char* what() noexcept { return "closed"; }
  /// All Closed are equal.
  friend bool operator==(Closed, Closed) noexcept = default;
};

/// A send to a channel nobody receives from any more: the value comes back.
template <class T>
struct SendError {
  /// The value that could not be sent.
  T value;
  /// A message for logs.
  static constexpr const char* what() noexcept { return "the channel is closed: every receiver is gone"; }
};

/// A try_send that could not send now: the channel is full, or closed. The
/// value comes back either way.
template <class T>
struct TrySendError {
  /// Why: Full (no room now) or Closed (the receiver is gone).
  enum class Kind { Full, Closed };
  /// Why the send failed.
  Kind kind;
  /// The value that could not be sent.
  T value;
  /// No room now.
  bool is_full() const noexcept { return kind == Kind::Full; }
  /// The channel ended.
  bool is_closed() const noexcept { return kind == Kind::Closed; }
};

/// A try_recv that found nothing: the channel is empty for now, or it is
/// empty for good because every sender is gone (or the receiver closed it).
enum class TryRecvError { Empty, Closed };

/// A try_acquire that got nothing: not enough permits now, or the
/// semaphore is closed.
enum class TryAcquireError { NoPermits, Closed };

/// A try_lock, try_read or try_write that got nothing: the lock is held, or
/// others wait for it first (no barging).
struct TryLockError {
  /// A message for logs.
  static constexpr const char* what() noexcept { return "the lock is held or others wait for it"; }
  /// All TryLockError are equal.
  friend bool operator==(TryLockError, TryLockError) noexcept = default;
};

}  // namespace pollux
