// pollux's own I/O error category.
#include "pollux/io/io_error.hpp"

#include <string>

namespace pollux {

namespace {

class IoCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "pollux::io"; }
  std::string message(int code) const override {
    switch (static_cast<io_errc>(code)) {
      case io_errc::unexpected_eof:
        return "unexpected end of stream";
      case io_errc::write_zero:
        return "the stream took no bytes";
      case io_errc::line_too_long:
        return "line too long";
    }
    return "unknown pollux::io error " + std::to_string(code);
  }
};

}  // namespace

const std::error_category& io_category() noexcept {
  static const IoCategory category;
  return category;
}

namespace detail {

void throw_unexpected_eof(const char* what, std::size_t got, std::size_t wanted) {
  throw std::system_error(io_errc::unexpected_eof, std::string(what) + ": the stream ended after " + std::to_string(got)
                                                       + " of " + std::to_string(wanted) + " bytes");
}

void throw_write_zero(const char* what, std::size_t written, std::size_t total) {
  throw std::system_error(io_errc::write_zero, std::string(what) + ": after " + std::to_string(written) + " of "
                                                   + std::to_string(total) + " bytes");
}

void throw_line_too_long(const char* what, std::size_t limit) {
  throw std::system_error(io_errc::line_too_long,
                          std::string(what) + ": a line longer than " + std::to_string(limit) + " bytes");
}

}  // namespace detail

}  // namespace pollux
