#!/usr/bin/env bash
# Every header under include/pollux compiles on its own as C++20, and as
# C++17 its first error is pollux's "pollux needs C++20 (-std=c++20)" (the
# C++17 compile stops at that first error: -Wfatal-errors keeps it quick).
# Each layer's public headers are all in its umbrella (pollux/<layer>.hpp),
# and pollux.hpp includes every umbrella, so none of them drifts, except
# the pieces a program includes on its own: fs and process (they bring
# <filesystem> and more, which a program without them should not compile)
# and tls (it needs OpenSSL, which the core never does), and embedded (the
# single-core profile's, checked with its flags). With the profile's flags,
# every other header compiles too, or stops at once at hosted_only.hpp's
# clear error: none fails deep inside. interop/ has no
# umbrella: each bridge there (coroutine.hpp) is included on its own.
#   tests/tools/headers.sh CXX INCLUDE_DIR
set -uo pipefail
cxx=$1
inc=$2
export cxx inc
check() {
  local header=$1
  local src="#include <${header#"$inc"/}>"
  case $header in  # the Asio bridge is checked where Asio is installed
    */interop/asio.hpp | */interop/asio_runtime.hpp) printf '#include <asio.hpp>\n' | "$cxx" -std=c++20 -fsyntax-only -x c++ - 2>/dev/null || return 0 ;;
  esac
  local profile=()  # the single-core profile's headers, with its flags
  case $header in */embedded/* | */pollux/embedded.hpp) profile=(-DPOLLUX_SINGLE_CORE -fno-exceptions -fno-rtti) ;; esac
  if ! out=$(printf '%s\n' "$src" | "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Werror "${profile[@]}" -I"$inc" -x c++ - 2>&1); then
    echo "FAIL: $header does not compile on its own as C++20:"; echo "$out" | head -20; return 1
  fi
  # Outside embedded/: in the single-core profile a header compiles, or its
  # first error is the profile's own (hosted_only.hpp), never a deeper one.
  if [ ${#profile[@]} -eq 0 ]; then
    local flags=(-DPOLLUX_SINGLE_CORE -fno-exceptions -fno-rtti)
    if ! out=$(printf '%s\n' "$src" | "$cxx" -std=c++20 -fsyntax-only -Wfatal-errors "${flags[@]}" -I"$inc" -x c++ - 2>&1); then
      case $(echo "$out" | grep -m1 -E ' (fatal )?error: ') in
        *"is not in the embedded profile"*) ;;
        *) echo "FAIL: $header in the embedded profile: neither compiles nor says it is hosted only:"
          echo "$out" | head -20; return 1 ;;
      esac
    fi
  fi
  first=$(printf '%s\n' "$src" | "$cxx" -std=c++17 -fsyntax-only -Wfatal-errors -I"$inc" -x c++ - 2>&1 | grep -m1 -E ' (fatal )?error: ')
  case $first in
    *"pollux needs C++20 (-std=c++20)"*) ;;
    *) echo "FAIL: $header as C++17: first error is not pollux's: $first"; return 1 ;;
  esac
}
export -f check
find "$inc/pollux" -name '*.hpp' -print0 | sort -z | xargs -0 -P "$(nproc)" -I{} bash -c 'check "$@"' _ {}
rc=$?
for dir in "$inc"/pollux/*/; do
  layer=$(basename "$dir")
  [ "$layer" = interop ] && continue
  umbrella="$inc/pollux/$layer.hpp"
  if [ ! -f "$umbrella" ]; then echo "FAIL: no umbrella header pollux/$layer.hpp"; rc=1; continue; fi
  case $layer in
    fs | process | tls | embedded) ;;
    *) grep -q "^#include \"pollux/$layer.hpp\"" "$inc/pollux/pollux.hpp" ||
      { echo "FAIL: pollux.hpp does not include pollux/$layer.hpp"; rc=1; } ;;
  esac
  for header in "$dir"*.hpp; do
    grep -q "^#include \"pollux/$layer/$(basename "$header")\"" "$umbrella" ||
      { echo "FAIL: pollux/$layer.hpp does not include pollux/$layer/$(basename "$header")"; rc=1; }
  done
done
[ $rc -eq 0 ] && echo "$(find "$inc/pollux" -name '*.hpp' | wc -l) headers: self-contained as C++20, a clear error as C++17 and outside the embedded profile"
exit $rc
