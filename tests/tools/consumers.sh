#!/usr/bin/env bash
# Builds and runs tests/tools/consumer/main.cpp against pollux the three ways the
# README's "Using pollux" shows: find_package(pollux) in CMake and
# pkg-config, both against a copy installed by `meson install`, and
# dependency('pollux') with pollux as a meson subproject.
#   tests/tools/consumers.sh [WORK_DIR]   (default build/consumers)
set -euo pipefail
# plain: no optimization, so the two library builds stay quick; what is
# checked is how a consumer finds and links pollux.
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$root/build/consumers}
rm -rf "$work"
mkdir -p "$work"
consumer=$root/tests/tools/consumer

echo "--- meson install into $work/prefix"
meson setup "$work/lib" "$root" --prefix="$work/prefix" --buildtype=plain -Dtests=false -Dexamples=false >"$work/lib.log" 2>&1 || { cat "$work/lib.log"; exit 1; }
ninja -C "$work/lib" install >>"$work/lib.log" 2>&1 || { cat "$work/lib.log"; exit 1; }
libdir=$(meson introspect "$work/lib" --buildoptions \
  | python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "libdir"))')
prefix=$work/prefix

echo "--- CMake: find_package(pollux CONFIG REQUIRED)"
cmake -S "$consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
"$work/cmake/consumer"

echo "--- pkg-config: c++ main.cpp \$(pkg-config --cflags --libs pollux)"
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
# No -std flag here: pollux.pc carries it.
c++ "$consumer/main.cpp" $(pkg-config --cflags --libs pollux) -o "$work/pkg-config-consumer"
"$work/pkg-config-consumer"
unset PKG_CONFIG_PATH

echo "--- meson subproject: dependency('pollux')"
mkdir -p "$work/subproject/subprojects"
cp "$consumer/main.cpp" "$consumer/meson.build" "$work/subproject/"
ln -s "$root" "$work/subproject/subprojects/pollux"
meson setup "$work/subproject/build" "$work/subproject" --buildtype=plain >"$work/subproject.log" 2>&1 || { cat "$work/subproject.log"; exit 1; }
# As a subproject pollux builds its library only: no tests, no examples.
if grep -q "test_\|examples/" "$work/subproject/build/build.ninja"; then
  echo "consumers: pollux as a subproject builds its tests or examples" >&2
  exit 1
fi
ninja -C "$work/subproject/build" >>"$work/subproject.log" 2>&1 || { cat "$work/subproject.log"; exit 1; }
"$work/subproject/build/consumer"
echo "consumers: CMake, pkg-config and meson subproject builds all ran"
