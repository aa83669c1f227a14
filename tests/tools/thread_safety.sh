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
mapfile -t sources < <(cd "$root" && find src -name '*.cpp' | sort)
cd "$root"
"$clangxx" -std=c++20 -fsyntax-only -Wthread-safety -Werror -Iinclude \
  "${sources[@]}" tests/tools/thread_safety_instances.cpp
echo "the analysis passed over ${#sources[@]} sources and the header templates"
