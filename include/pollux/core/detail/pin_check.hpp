// PinCheck<F>: the debug check of rule 4 for a future that hands out its
// own address on its first poll (a timer entry, a waiter node linked into a
// list): moving it afterwards would leave that address dangling, so debug
// builds stop at the move with a message naming F. Release builds keep
// nothing: the member is empty and takes no space.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/core/detail/contract.hpp"

namespace pollux::detail {

/// A member of F that F marks once it handed out its address; moving F (its
/// move constructor or assignment moves this member) checks the mark.
/// Declare it `[[no_unique_address]]`.
template <class F, bool Enabled = check_contract>
class PinCheck {
 public:
  PinCheck() noexcept = default;
  PinCheck(PinCheck&& other) noexcept { other.check_movable(); }
  PinCheck& operator=(PinCheck&& other) noexcept {
    other.check_movable();
    check_movable();
    return *this;
  }

  /// F's address is now known elsewhere: F must not move from here on.
  void pin() noexcept { pinned_ = true; }
  /// F took its address back (unlinked its entry): it may move again.
  void unpin() noexcept { pinned_ = false; }

 private:
  void check_movable() const noexcept {
    if (pinned_) contract_violation(type_name<F>(), "moved after its first poll (contract rule 4)");
  }

  bool pinned_ = false;
};

/// Release builds: nothing to keep, nothing to check.
template <class F>
class PinCheck<F, false> {
 public:
  void pin() noexcept {}
  void unpin() noexcept {}
};

}  // namespace pollux::detail
