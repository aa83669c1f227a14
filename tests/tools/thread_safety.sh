#!/usr/bin/env bash
# Clang's thread-safety analysis over the whole library: every source file,
# and the header templates with lock-guarded fields (instantiated by
# thread_safety_instances.cpp). A field marked POLLUX_GUARDED_BY(m) touched
# without m held, or a function marked POLLUX_REQUIRES(m) called without
# it, fails the test.
#   tests/tools/thread_safety.sh CLANGXX SOURCE_ROOT
set -euo pipefail
clangxx=$1
root=$2
# src/embedded/ is the single-core profile's: analysed with its own flags.
mapfile -t sources < <(cd "$root" && find src -name '*.cpp' -not -path 'src/embedded/*' | sort)
mapfile -t profile < <(cd "$root" && find src/embedded -name '*.cpp' | sort)
cd "$root"
"$clangxx" -std=c++20 -fsyntax-only -Wthread-safety -Werror -Iinclude \
  "${sources[@]}" tests/tools/thread_safety_instances.cpp
"$clangxx" -std=c++20 -fsyntax-only -Wthread-safety -Werror -Iinclude -DPOLLUX_SINGLE_CORE -fno-exceptions -fno-rtti \
  "${profile[@]}"
echo "the analysis passed over $((${#sources[@]} + ${#profile[@]})) sources and the header templates"
