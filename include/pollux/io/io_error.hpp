// Errors pollux's I/O raises itself rather than getting from the kernel:
// a stream that ended before read_exact filled its buffer, a stream that
// took no byte of a write, a line longer than its reader allows. They are std::system_error like the kernel's,
// with codes of pollux's own category, so that one catch handles all:
//   catch (const std::system_error& e) { if (e.code() == pollux::io_errc::unexpected_eof) ... }
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <system_error>

namespace pollux {

/// pollux's own I/O errors, thrown as std::system_error with io_category().
enum class io_errc {
  unexpected_eof = 1,  // the stream ended before the bytes asked for came
  write_zero,          // the stream took none of the bytes offered
  line_too_long,       // a line went past the limit a line reader was given
};

/// What try_read and try_write answer when the socket has nothing to give
/// or no room now: wait for readable() or writable(), then try again.
struct WouldBlock {
  /// A message for logs.
  static constexpr const char* what() noexcept { return "the operation would block"; }
};

/// The category of io_errc codes ("pollux.io").
const std::error_category& io_category() noexcept;

/// Lets an io_errc convert to std::error_code.
inline std::error_code make_error_code(io_errc code) noexcept { return {static_cast<int>(code), io_category()}; }

namespace detail {
[[noreturn]] void throw_unexpected_eof(const char* what, std::size_t got, std::size_t wanted);
[[noreturn]] void throw_write_zero(const char* what, std::size_t written, std::size_t total);
[[noreturn]] void throw_line_too_long(const char* what, std::size_t limit);
}  // namespace detail

}  // namespace pollux

template <>
struct std::is_error_code_enum<pollux::io_errc> : std::true_type {};
